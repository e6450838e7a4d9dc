package engine

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"

	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/engine/responsesws"
	"github.com/ccload/ccload/protocol"
)

// wsState is the engine's part of the Responses WebSocket transport: the
// socket count its limits need and the transport's stats (the per-token
// counts are in the registry).
type wsState struct {
	stats responsesws.Stats
	open  atomic.Int64
}

// wsTurnKey marks a RequestCtx that carries one WebSocket turn, not a
// client connection: its log row notes the transport and it has no
// connection to set write deadlines on. Its value is the downstream
// socket's *upstreamSockets.
const wsTurnKey = "ccload.websocket_turn"

// WebSockets reports the transport's stats (/metrics, /admin/status),
// first forgetting the sessions past session_ttl so the gauges count only
// sessions a turn could still continue.
func (e *Engine) WebSockets() *responsesws.Stats {
	e.reg.wsSessions.Expire(e.cfg.Current().Server.WebSockets.SessionTTL.D(), e.clock.Now())
	return &e.ws.stats
}

// upgrader accepts Codex's permessage-deflate offer. The default origin
// check stays: a browser page from another origin may not open a socket
// with a token the browser happens to hold.
var upgrader = websocket.FastHTTPUpgrader{EnableCompression: true}

// serveSocket authenticates and admits an upgrade with the same token
// rules as HTTP (a refused upgrade gets the HTTP error and nothing goes
// upstream), then serves its turns, each through serveProxy like any
// POST /v1/responses.
func (e *Engine) serveSocket(ctx *fasthttp.RequestCtx) {
	snap := e.cfg.Current()
	tok := e.authenticate(snap, clientToken(ctx))
	if tok == nil {
		e.unauthorized.Add(1)
		writeError(ctx, protocol.Responses, &clientError{Status: 401, Msg: "missing or invalid ccload token"})
		return
	}
	b := snap.Server.WebSockets
	perToken := e.reg.socketCount(tok.Name)
	release := func() { e.ws.open.Add(-1); perToken.Add(-1) }
	open, mine := e.ws.open.Add(1), perToken.Add(1)
	switch {
	case b.MaxSockets > 0 && open > int64(b.MaxSockets):
		release()
		e.ws.stats.Refused.Add(1)
		writeError(ctx, protocol.Responses, &clientError{Status: 429, Msg: fmt.Sprintf("ccload already holds server.websockets.max_sockets=%d sockets", b.MaxSockets)})
		return
	case b.MaxSocketsPerToken > 0 && mine > int64(b.MaxSocketsPerToken):
		release()
		e.ws.stats.Refused.Add(1)
		writeError(ctx, protocol.Responses, &clientError{Status: 429, Msg: fmt.Sprintf("token %q already holds server.websockets.max_sockets_per_token=%d sockets", tok.Name, b.MaxSocketsPerToken)})
		return
	}
	tmpl := turnTemplate(&ctx.Request.Header)
	ups := new(upstreamSockets)
	remote := ctx.RemoteAddr()
	opts := responsesws.Options{
		Bounds:       b,
		MaxFrame:     int64(snap.Server.MaxBodyBytes),
		Stats:        &e.ws.stats,
		Sessions:     e.reg.wsSessions,
		Token:        tok.Name,
		SessionID:    sessionID(&ctx.Request.Header),
		WriteTimeout: snap.Server.Limits.StreamWriteTimeout.D(),
		Now:          e.clock.Now,
		Turn: func(body []byte, chain responsesws.Chain) responsesws.Result {
			ups.setChain(chain)
			return e.serveTurn(tmpl, remote, ups, body, opGenerate)
		},
		WarmUp: func(body []byte) responsesws.Result {
			return e.serveTurn(tmpl, remote, ups, body, opWarmUp)
		},
	}
	err := upgrader.Upgrade(ctx, func(conn *websocket.Conn) {
		defer release()
		defer ups.close()
		responsesws.Serve(conn, opts)
	})
	if err != nil {
		release() // the upgrader answered the HTTP error
	}
}

// sessionID names the conversation a socket belongs to: Codex sends
// Session-Id and Thread-Id on every socket of one session, so a socket
// that reconnects finds the chains the previous one left.
func sessionID(h *fasthttp.RequestHeader) string {
	if v := h.Peek("Session-Id"); len(v) > 0 {
		return string(v)
	}
	return string(h.Peek("Thread-Id"))
}

// turnTemplate is the request each turn is served as: the upgrade's
// headers (credentials, Codex's session headers) without the ones that
// belong to the socket.
func turnTemplate(h *fasthttp.RequestHeader) *fasthttp.Request {
	req := new(fasthttp.Request)
	h.CopyTo(&req.Header)
	for _, k := range []string{"Upgrade", "Connection", "Sec-WebSocket-Key", "Sec-WebSocket-Version", "Sec-WebSocket-Extensions", "Sec-WebSocket-Protocol"} {
		req.Header.Del(k)
	}
	// The beta flag names the socket transport; the turn is a plain POST.
	if v := string(req.Header.Peek("OpenAI-Beta")); strings.HasPrefix(v, "responses_websockets") {
		req.Header.Del("OpenAI-Beta")
	}
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	return req
}

// serveTurn runs one turn through serveProxy on a RequestCtx of its own,
// so routing, limits, failover, logging and live events are exactly an
// HTTP request's. The SSE body the attempt loop commits to is handed back
// to the socket, which relays it frame by frame; closing it early (the
// client went away) cancels the upstream like a dropped HTTP client.
func (e *Engine) serveTurn(tmpl *fasthttp.Request, remote net.Addr, ups *upstreamSockets, body []byte, o op) responsesws.Result {
	var req fasthttp.Request
	tmpl.CopyTo(&req)
	req.SetBody(body)
	rc := new(fasthttp.RequestCtx)
	rc.Init(&req, remote, nil)
	rc.SetUserValue(wsTurnKey, ups)
	e.serveProxy(rc, endpoint{family: protocol.Responses, op: o})
	if rc.Response.IsBodyStream() {
		return responsesws.Result{Stream: streamOf(rc.Response.BodyStream())}
	}
	return responsesws.Result{Status: rc.Response.StatusCode(), Body: append([]byte(nil), rc.Response.Body()...)}
}

// streamOf reads a committed stream body. The relay writes into a pipe
// (each write one flushed chunk), so a socket that stops reading holds
// the relay back, and closing the reader makes the relay's next write
// fail: the upstream is cancelled and the row says the client went away.
func streamOf(body io.Reader) io.ReadCloser {
	wt, ok := body.(io.WriterTo)
	if !ok {
		if rc, ok := body.(io.ReadCloser); ok {
			return rc
		}
		return io.NopCloser(body)
	}
	pr, pw := io.Pipe()
	go func() {
		wt.WriteTo(pw)
		if c, ok := body.(io.Closer); ok {
			c.Close()
		}
		pw.Close()
	}()
	return pr
}
