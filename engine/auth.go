package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"sync/atomic"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
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
