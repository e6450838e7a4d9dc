package engine

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/protocol"
)

// otherBodyLimit bounds request bodies outside the proxy endpoints (admin
// API, login, dashboard): none of them takes more than a small JSON object.
const otherBodyLimit = 1 << 20

// forever stands for "no timeout" where fasthttp reads zero as "use the
// server-wide value".
const forever = 100 * 365 * 24 * time.Hour

// NewServer builds the HTTP server around handler (Engine.Handler, with the
// admin API and dashboard mounted) with the limits of server:
// a header read timeout for every connection, a body read timeout and the
// token check before any large body is read, a write deadline on proxy
// responses, connection caps overall and per peer, and errors that never
// echo the raw request. The overall cap and header timeout are read once,
// at start; the per-peer cap, body limits and timeouts follow reloads.
func (e *Engine) NewServer(handler fasthttp.RequestHandler) *fasthttp.Server {
	snap := e.cfg.Current()
	lim := snap.Server.Limits
	return &fasthttp.Server{
		Handler:            handler,
		Name:               "ccload",
		MaxRequestBodySize: int(snap.Server.MaxBodyBytes),
		HeaderReceived:     e.headerReceived,
		ErrorHandler:       e.ErrorHandler,
		ReadTimeout:        lim.HeaderTimeout.D(),
		IdleTimeout:        2 * time.Minute,
		Concurrency:        lim.MaxConns,
		// server.max_conns_per_ip, with trusted proxies not counted
		// (peerCap), in place of fasthttp's MaxConnsPerIP.
		ConnState: newPeerCap(e).connState,
		// fasthttp would otherwise quote the raw request (client token
		// included) in its error messages and logs.
		SecureErrorLogMessage: true,
		Logger:                serverLogger{e.log},
		CloseOnShutdown:       true,
		// Multipart uploads (audio, image edits) are relayed as bytes; only
		// their model field is read (engine/passthrough.go).
		DisablePreParseMultipartForm: true,
		// Hand a connection's read buffer back once its request is read
		// and its write buffer once a response is out: a stream then holds
		// only what writing it needs, and an idle keep-alive connection
		// nothing (perf: memory per stream).
		ReduceMemoryUsage: true,
		// A stream holds its connection's write buffer for its whole life:
		// 2 KiB, not fasthttp's 4, holds a typical flush (an event or a
		// few) and a non-stream answer of up to ~1.5 KB with its headers
		// in one write; a larger answer takes a second write, and a larger
		// flush bypasses the buffer (perf: memory per stream).
		WriteBufferSize: 2 << 10,
	}
}

// headerReceived runs once a request's headers are in, before any of its
// body is read. A proxy request without a valid token may send no body at
// all (fasthttp then fails it with ErrBodyTooLarge and ErrorHandler answers
// 401), so unauthenticated connections cost nothing however much they
// announce.
func (e *Engine) headerReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	snap := e.cfg.Current()
	lim := snap.Server.Limits
	conf := fasthttp.RequestConfig{ReadTimeout: orForever(lim.BodyTimeout.D()), MaxRequestBodySize: int(snap.Server.MaxBodyBytes)}
	u := fasthttp.AcquireURI()
	defer fasthttp.ReleaseURI(u)
	if err := u.Parse(nil, h.RequestURI()); err != nil {
		conf.MaxRequestBodySize = 1
		return conf
	}
	if _, ok := parseEndpoint(string(h.Method()), string(u.Path()), false); !ok {
		conf.MaxRequestBodySize = min(conf.MaxRequestBodySize, otherBodyLimit)
		return conf
	}
	conf.WriteTimeout = lim.StreamWriteTimeout.D()
	if e.authenticate(snap, tokenFrom(h, u.QueryArgs())) == nil {
		conf.MaxRequestBodySize = 1
	}
	return conf
}

func orForever(d time.Duration) time.Duration {
	if d <= 0 {
		return forever
	}
	return d
}

// peerCap is server.max_conns_per_ip: how many connections one peer
// address may hold. It replaces fasthttp's MaxConnsPerIP, which counts
// every peer alike: behind a load balancer every client arrives from the
// balancer's address, so the cap refused the 257th stream of everyone. A
// peer in server.trusted_proxies is not counted; its clients are told
// apart by X-Forwarded-For, and are bounded by server.max_conns and their
// tokens' limits.
//
// It counts from fasthttp's ConnState: a connection counts from StateNew
// until it closes or is hijacked (a WebSocket, which has its own caps in
// server.websockets). The limit and the trusted proxies are read from the
// serving config at each accept, so they follow reloads.
type peerCap struct {
	e       *Engine
	mu      sync.Mutex
	open    map[netip.Addr]int
	counted map[net.Conn]netip.Addr
}

func newPeerCap(e *Engine) *peerCap {
	return &peerCap{e: e, open: map[netip.Addr]int{}, counted: map[net.Conn]netip.Addr{}}
}

// tooMany is written to a connection over the cap, before it is closed.
const tooMany = "HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 64\r\n\r\n" +
	"too many connections from this address (server.max_conns_per_ip)"

// connState is the server's ConnState hook.
func (p *peerCap) connState(c net.Conn, st fasthttp.ConnState) {
	switch st {
	case fasthttp.StateNew:
		p.admit(c)
	case fasthttp.StateClosed, fasthttp.StateHijacked:
		p.mu.Lock()
		if a, ok := p.counted[c]; ok {
			delete(p.counted, c)
			if p.open[a]--; p.open[a] <= 0 {
				delete(p.open, a)
			}
		}
		p.mu.Unlock()
	}
}

// admit counts a new connection, or refuses it (429, then closed) when
// its peer already holds the cap.
func (p *peerCap) admit(c net.Conn) {
	srv := &p.e.cfg.Current().Server
	limit := srv.Limits.MaxConnsPerIP
	a, ok := connAddr(c)
	if limit <= 0 || !ok || srv.Trusts(a) {
		return
	}
	p.mu.Lock()
	over := p.open[a] >= limit
	if !over {
		p.open[a]++
		p.counted[c] = a
	}
	p.mu.Unlock()
	if over {
		// The write goes to a fresh socket's empty buffer, so it does not
		// hold up the accept loop this runs on; fasthttp then finds the
		// connection closed and ends it.
		c.Write([]byte(tooMany))
		c.Close()
	}
}

// connAddr is a connection's peer address.
func connAddr(c net.Conn) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

// ErrorHandler answers fasthttp's own request errors (a body over the
// limit, a read timeout, a malformed request) in the caller's protocol
// shape; set it as fasthttp.Server.ErrorHandler. The message never quotes
// fasthttp's error, which may hold the raw request. A caller with a valid
// token gets a log row with the reason, like every other rejected request.
func (e *Engine) ErrorHandler(ctx *fasthttp.RequestCtx, err error) {
	ep, ok := parseEndpoint("POST", string(ctx.Path()), false)
	if !ok {
		ep.family = protocol.OpenAI
	}
	snap := e.cfg.Current()
	tok := e.authenticate(snap, clientToken(ctx))
	ce := &clientError{Status: fasthttp.StatusBadRequest, Msg: "malformed HTTP request"}
	var ne net.Error
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge) && ok && tok == nil:
		e.unauthorized.Add(1)
		ce = &clientError{Status: fasthttp.StatusUnauthorized, Msg: "missing or invalid ccload token"}
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		ce = &clientError{Status: fasthttp.StatusRequestEntityTooLarge,
			Msg: fmt.Sprintf("request body is over the server.max_body_bytes limit (%d bytes)", int64(snap.Server.MaxBodyBytes))}
	case errors.As(err, &ne) && ne.Timeout():
		ce = &clientError{Status: fasthttp.StatusRequestTimeout, Msg: "request not received within server.header_timeout / server.body_timeout"}
	}
	if !ok || tok == nil {
		writeError(ctx, ep.family, ce)
		return
	}
	r := e.newRequest(ctx, ep, snap, tok)
	e.inflight.Add(1)
	e.reject(ctx, r, ce)
	e.finish(r)
}

// badPath reports a request path with dot segments ("/..", "/."), also
// percent-encoded ("%2e%2e", "..%2f"). fasthttp would normalise
// /v1beta/models/../../admin/x into the admin API; no client of ours sends
// such a path, so it is refused instead of resolved. Encoded slashes alone
// are fine (admin channel names may hold one).
func badPath(raw []byte) bool {
	path := raw
	if i := bytes.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if bytes.IndexByte(path, '.') < 0 && bytes.IndexByte(path, '%') < 0 {
		return false // no dot, plain or escaped: nothing to look at (and no copy)
	}
	u, err := url.PathUnescape(string(path))
	if err != nil {
		return true
	}
	for seg := range strings.SplitSeq(strings.ReplaceAll(u, "\\", "/"), "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// serverLogger sends fasthttp's own messages to the engine's log. Errors
// are reduced to their class: fasthttp quotes the request URI (which may
// carry ?key=) and header lines in them even with SecureErrorLogMessage.
type serverLogger struct{ log *slog.Logger }

func (l serverLogger) Printf(format string, args ...any) {
	safe := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case error:
			safe[i] = errorClass(v)
		case string: // connection addresses; anything longer may be request text
			if len(v) > 64 {
				v = "…"
			}
			safe[i] = v
		case int, int64, uint64, time.Duration:
			safe[i] = v
		default:
			safe[i] = "?"
		}
	}
	l.log.Info("http server", "msg", fmt.Sprintf(format, safe...))
}

// errorClass names a request error without quoting any of the request.
func errorClass(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return "request body over the limit"
	case errors.As(err, &ne) && ne.Timeout():
		return "read or write timeout"
	case errors.Is(err, net.ErrClosed):
		return "connection closed"
	}
	return "malformed request"
}
