package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/failure"
	"github.com/valyala/fasthttp"
)

// clientToken extracts the client's credential from any of the places the
// four families' SDKs put it: Authorization Bearer, x-api-key,
// x-goog-api-key, or the ?key= query parameter. The bytes are fasthttp's:
// valid only while the request is.
func clientToken(ctx *fasthttp.RequestCtx) []byte {
	return tokenFrom(&ctx.Request.Header, ctx.QueryArgs())
}

// tokenFrom is clientToken over a header and query, so it also runs before
// the body is read (Engine.headerReceived).
func tokenFrom(h *fasthttp.RequestHeader, q *fasthttp.Args) []byte {
	// A client that brings its own upstream credential (Claude Code with a
	// subscription sign-in, for a `credentials: client` channel) names its
	// ccload token here, set with ANTHROPIC_CUSTOM_HEADERS.
	if v := h.Peek(ccloadTokenHeader); len(v) > 0 {
		return bytes.TrimSpace(v)
	}
	if v := h.Peek("Authorization"); len(v) > 0 {
		if t, ok := bytes.CutPrefix(v, []byte("Bearer ")); ok {
			return bytes.TrimSpace(t)
		}
		if t, ok := bytes.CutPrefix(v, []byte("bearer ")); ok {
			return bytes.TrimSpace(t)
		}
	}
	for _, name := range []string{"x-api-key", "x-goog-api-key", "api-key"} {
		if v := h.Peek(name); len(v) > 0 {
			return v
		}
	}
	return q.Peek("key")
}

// authenticate finds the token the client presented. Only its sha256 is
// compared: the config never holds a token in clear, and a map lookup on a
// hash leaks nothing useful through timing.
func authenticate(snap *config.Snapshot, raw []byte) *config.Token {
	if len(raw) == 0 {
		return nil
	}
	sum := sha256.Sum256(raw)
	return snap.TokenBySHA256(hex.EncodeToString(sum[:]))
}

// tokenCache remembers, for one config snapshot, the credentials that
// authenticated, so a request is hashed once rather than at header time
// (headerReceived) and again in its handler, and a keep-alive client's
// later requests not at all (perf). Only credentials that
// matched a token are kept: at most one per configured token, so wrong
// guesses cannot grow it. It lives in memory only, like the request that
// carried the credential, and Go's maps hash keys with a per-process random
// seed, so the time a lookup takes says nothing about how close a guess was.
type tokenCache struct {
	mu sync.Mutex
	// known is replaced, never changed, so lookups read it without a lock.
	known atomic.Pointer[map[string]*config.Token]
}

// authenticate is the package's authenticate through the cache of snap.
func (e *Engine) authenticate(snap *config.Snapshot, raw []byte) *config.Token {
	if len(raw) == 0 {
		return nil
	}
	c := &e.view(snap).tokens
	if m := c.known.Load(); m != nil {
		if t, ok := (*m)[string(raw)]; ok { // no copy: a map index by string(bytes)
			return t
		}
	}
	t := authenticate(snap, raw)
	if t != nil {
		c.remember(string(raw), t)
	}
	return t
}

func (c *tokenCache) remember(raw string, t *config.Token) {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := map[string]*config.Token{raw: t}
	if m := c.known.Load(); m != nil {
		for k, v := range *m {
			next[k] = v
		}
	}
	c.known.Store(&next)
}

// `credentials: client` (design §9): an Anthropic channel that forwards the
// client's own Anthropic credential, a Claude Code subscription sign-in
// (Authorization: Bearer sk-ant-oat…) or an API key, while the client
// authenticates to ccload with its ccload token in x-ccload-token. This is
// the one case where a client credential goes upstream, and only to the
// channel that asks for it: ccload pools no Claude subscription and
// imitates no client, as Anthropic's terms forbid third-party use of
// subscription sign-ins.

// ccloadTokenHeader carries the ccload token of a client whose standard
// credential header holds its own upstream credential.
const ccloadTokenHeader = "x-ccload-token"

// clientCredential is the client's upstream credential when it named its
// ccload token in x-ccload-token; zero otherwise.
func clientCredential(h *fasthttp.RequestHeader) [2]string {
	if len(h.Peek(ccloadTokenHeader)) == 0 {
		return [2]string{}
	}
	if v := h.Peek("Authorization"); len(v) > 0 {
		return [2]string{"Authorization", string(v)}
	}
	if v := bytes.TrimSpace(h.Peek("x-api-key")); len(v) > 0 {
		return [2]string{"x-api-key", string(v)}
	}
	return [2]string{}
}

// clientCredentialFor puts the client's credential on an attempt of a
// `credentials: client` channel in place of a key. A request without one
// cannot use the channel: it moves on to the next route, cooling nothing.
func clientCredentialFor(r *request, c *attempt) *attemptResult {
	cred := r.clientCred
	if cred[0] == "" {
		o := failure.Outcome{Kind: failure.KindAuth, Scope: failure.ScopeChannel, Retry: true,
			Message: "channel " + c.route.Channel.Name + " forwards the client's own credential; this request authenticated without one (send the ccload token in x-ccload-token and the Claude credential as usual)"}
		c.at.end(c.started, 0, o)
		return &attemptResult{outcome: o, miss: true, status: 401}
	}
	base := c.rq.Header
	c.rq.Header = func(h headerSetter) {
		base(h)
		h.Del("Authorization")
		h.Del("x-api-key")
		if strings.EqualFold(cred[0], "Authorization") {
			h.Set("Authorization", cred[1])
		} else {
			h.Set("x-api-key", cred[1])
		}
	}
	return nil
}

// ClientIP is the address of the client behind ctx: the peer's, or, when
// the peer is one of server.trusted_proxies, the rightmost address of
// X-Forwarded-For that is not itself a trusted proxy (the one the first
// trusted proxy saw). Without trusted_proxies the header is ignored: any
// client can write it. "" when unknown.
func ClientIP(ctx *fasthttp.RequestCtx, srv *config.Server) string {
	peer, ok := peerAddr(ctx)
	if !ok {
		return ""
	}
	if !srv.Trusts(peer) {
		return peer.String()
	}
	hops := strings.Split(string(ctx.Request.Header.Peek("X-Forwarded-For")), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if !srv.Trusts(a) {
			return a.Unmap().String()
		}
	}
	return peer.String()
}

// IsHTTPS reports whether the client reached ccload over TLS: directly, or
// through a trusted proxy that says so in X-Forwarded-Proto.
func IsHTTPS(ctx *fasthttp.RequestCtx, srv *config.Server) bool {
	if ctx.IsTLS() {
		return true
	}
	peer, ok := peerAddr(ctx)
	return ok && srv.Trusts(peer) && strings.EqualFold(strings.TrimSpace(firstValue(ctx.Request.Header.Peek("X-Forwarded-Proto"))), "https")
}

// Origin is the scheme://host the client used to reach ccload (host from
// X-Forwarded-Host when a trusted proxy sets it), to compare with a
// browser's Origin header.
func Origin(ctx *fasthttp.RequestCtx, srv *config.Server) string {
	scheme := "http"
	if IsHTTPS(ctx, srv) {
		scheme = "https"
	}
	host := string(ctx.Host())
	if peer, ok := peerAddr(ctx); ok && srv.Trusts(peer) {
		if h := strings.TrimSpace(firstValue(ctx.Request.Header.Peek("X-Forwarded-Host"))); h != "" {
			host = h
		}
	}
	return scheme + "://" + strings.ToLower(host)
}

func firstValue(v []byte) string {
	s, _, _ := strings.Cut(string(v), ",")
	return s
}

func peerAddr(ctx *fasthttp.RequestCtx) (netip.Addr, bool) {
	ip := ctx.RemoteIP()
	if ip == nil || ip.Equal(net.IPv4zero) {
		return netip.Addr{}, false
	}
	a, ok := netip.AddrFromSlice(ip)
	return a.Unmap(), ok
}
