package engine

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ccload/ccload/engine/responsesws"
	"github.com/ccload/ccload/protocol"
)

// refusalTTL is how long a URL that refused the WebSocket upgrade (it
// answered the handshake with HTTP, e.g. 404 or 426) is served over
// HTTP/SSE without asking again, so each turn does not pay a refused
// handshake.
const refusalTTL = 10 * time.Minute

// sendSocket tries a WebSocket turn on a channel marked `websockets: true`
// over a native upstream Responses WebSocket (http->ws, https->wss, the
// same path): the body goes up as one response.create frame and the
// events that come back are handed to the stream path as SSE, so the
// peek, failover before output, relay and usage are the HTTP path's.
//
// The upstream socket is kept in ups (the downstream socket's) after a
// turn that ended cleanly, and the next turn for the same slot (channel,
// key, URL) reuses it instead of dialing; ups closes it with the
// downstream socket. When the upstream refuses the upgrade the turn goes
// over HTTP/SSE instead (the attempt's notes say so), and so do the URL's
// turns for refusalTTL.
func (e *Engine) sendSocket(rq *upstreamRequest, ups *upstreamSockets, slot string, note func(string)) sent {
	if until, ok := e.reg.wsRefused.load(rq.URL); ok && e.clock.Now().Before(until) {
		note("websocket upstream refused the upgrade earlier, HTTP/SSE used")
		return e.send(rq)
	}
	frame, _ := sjson.SetBytes(rq.Body, "type", "response.create")
	frame, _ = sjson.DeleteBytes(frame, "stream")

	conn, last := ups.take(slot)
	var redial func() (*websocket.Conn, error)
	var full []byte // the whole-transcript frame, while a chained one is unanswered
	if conn != nil {
		// An idle socket the upstream closed meanwhile may still take the
		// write; its first read then fails, and the body dials once more.
		own := *rq // the closure outlives the attempt's request value
		redial = func() (*websocket.Conn, error) { return e.dialSocket(&own, frame) }
		up := frame
		if chained, ok := chainFrame(frame, ups.turnChain(), last); ok {
			up, full = chained, frame
			note("continued the upstream socket's own response " + last + " (previous_response_id), not the whole transcript")
		}
		if conn.WriteMessage(websocket.TextMessage, up) != nil {
			conn.Close()
			conn, redial, full = nil, nil, nil
		}
	}
	if conn == nil {
		var err error
		conn, err = e.dialSocket(rq, frame)
		if err != nil {
			var refused *socketRefused
			if errors.As(err, &refused) {
				e.reg.wsRefused.store(rq.URL, e.clock.Now().Add(refusalTTL))
			}
			note("websocket upstream refused (" + truncate(err.Error(), 120) + "), HTTP/SSE used")
			return e.send(rq)
		}
	}
	b := &socketBody{conn: conn, ctx: rq.Ctx, redial: redial, full: full, ups: ups, slot: slot}
	b.arm()
	resp := &upstreamResponse{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:       b,
		Ctx:        rq.Ctx,
	}
	if rq.onResponse != nil {
		// A debug capture records the socket's events as the stream the
		// relay reads (each frame one SSE event), as for an HTTP turn.
		rq.onResponse(resp)
	}
	return sent{resp: resp}
}

// chainFrame rewrites a turn whose input replays the transcript of
// response last, on the upstream socket that produced last, as that
// response's continuation: previous_response_id plus only the new items.
// The upstream still holds last in its socket's memory (OpenAI's WebSocket
// mode guide, developers.openai.com/api/docs/guides/websocket-mode: the
// most recent response of a connection can be continued with store:false).
// false when the turn does not continue last, or its input is not the
// transcript plus new items any more (a conversion reshaped it).
func chainFrame(frame []byte, chain responsesws.Chain, last string) ([]byte, bool) {
	if chain.Prev == "" || chain.Prev != last || chain.Replayed <= 0 {
		return nil, false
	}
	in := gjson.GetBytes(frame, "input")
	if !in.IsArray() {
		return nil, false
	}
	items := in.Array()
	if len(items) < chain.Replayed {
		return nil, false
	}
	arr := []byte{'['}
	for i, it := range items[chain.Replayed:] {
		if i > 0 {
			arr = append(arr, ',')
		}
		arr = append(arr, it.Raw...)
	}
	arr = append(arr, ']')
	out, err := sjson.SetRawBytes(frame, "input", arr)
	if err != nil {
		return nil, false
	}
	if out, err = sjson.SetBytes(out, "previous_response_id", last); err != nil {
		return nil, false
	}
	return out, true
}

// socketRefused is a handshake the upstream answered with HTTP instead of
// switching protocols: the URL does not serve WebSocket mode.
type socketRefused struct {
	status int
	err    error
}

func (r *socketRefused) Error() string { return r.err.Error() }

// dialSocket opens an upstream socket and sends frame on it.
func (e *Engine) dialSocket(rq *upstreamRequest, frame []byte) (*websocket.Conn, error) {
	u := rq.URL
	switch {
	case strings.HasPrefix(u, "https://"):
		u = "wss://" + strings.TrimPrefix(u, "https://")
	case strings.HasPrefix(u, "http://"):
		u = "ws://" + strings.TrimPrefix(u, "http://")
	}
	h := http.Header{}
	rq.Header(h)
	for _, k := range []string{"Content-Type", "Content-Length", "Accept-Encoding", "Connection", "Upgrade"} {
		h.Del(k)
	}
	h.Set("OpenAI-Beta", "responses_websockets=2026-02-06")
	d := websocket.Dialer{HandshakeTimeout: 30 * time.Second, TLSClientConfig: &tls.Config{RootCAs: e.upstream.Roots()}}
	conn, resp, err := d.DialContext(rq.Ctx, u, h)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, &socketRefused{status: resp.StatusCode, err: err}
		}
		return nil, err
	}
	// An upstream event is held whole before it is relayed: bound it as a
	// non-stream answer is. The dialer offers no compression, so the
	// library's limit, which counts wire bytes, counts them all.
	conn.SetReadLimit(maxUpstreamBody)
	if err := conn.WriteMessage(websocket.TextMessage, frame); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// upstreamSockets holds the one idle upstream socket a downstream socket
// keeps between turns (its turns run one at a time), the id of the last
// response that socket completed, and the chain of the turn being served.
type upstreamSockets struct {
	mu     sync.Mutex
	slot   string
	conn   *websocket.Conn
	last   string
	chain  responsesws.Chain
	closed bool
}

// setChain records which response the next turn continues.
func (u *upstreamSockets) setChain(c responsesws.Chain) {
	u.mu.Lock()
	u.chain = c
	u.mu.Unlock()
}

func (u *upstreamSockets) turnChain() responsesws.Chain {
	if u == nil {
		return responsesws.Chain{}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.chain
}

// take hands out the idle socket when it serves slot, with the id of the
// last response it completed; an idle socket for another slot is closed.
func (u *upstreamSockets) take(slot string) (*websocket.Conn, string) {
	if u == nil {
		return nil, ""
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	c, last := u.conn, u.last
	u.conn, u.last = nil, ""
	if c != nil && u.slot != slot {
		c.Close()
		return nil, ""
	}
	return c, last
}

// put keeps c idle for slot, with last the id of the response it just
// completed, or closes it when the downstream socket is gone.
func (u *upstreamSockets) put(slot string, c *websocket.Conn, last string) {
	if u == nil {
		c.Close()
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		c.Close()
		return
	}
	if u.conn != nil {
		u.conn.Close()
	}
	u.slot, u.conn, u.last = slot, c, last
}

// close ends the idle socket with the downstream one.
func (u *upstreamSockets) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closed = true
	if u.conn != nil {
		u.conn.Close()
		u.conn = nil
	}
}

// socketBody reads an upstream Responses WebSocket as the SSE stream the
// HTTP path would have carried: each text frame becomes one event named
// by its type. It ends after the response's terminal event; after a
// completed (or incomplete) response the socket goes back to ups for the
// next turn.
type socketBody struct {
	mu     sync.Mutex      // guards conn and stop against Close
	conn   *websocket.Conn // nil once handed back to ups or closed
	stop   func() bool     // disarms the close on ctx's end
	ctx    context.Context
	redial func() (*websocket.Conn, error) // set while a reused socket has not answered
	full   []byte                          // the whole-transcript frame, while a chained frame has not answered
	ups    *upstreamSockets
	slot   string
	buf    bytes.Buffer
	done   bool
}

// arm closes the socket when the attempt's context ends (timeouts, the
// client going away), which unblocks a pending read.
func (b *socketBody) arm() {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.conn
	b.stop = context.AfterFunc(b.ctx, func() { c.Close() })
}

// disarm takes the socket out of the body; nil when it is gone already
// or the context's end closed it.
func (b *socketBody) disarm() *websocket.Conn {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.conn
	b.conn = nil
	if !b.stop() {
		return nil
	}
	return c
}

func (b *socketBody) Read(p []byte) (int, error) {
	for b.buf.Len() == 0 {
		if b.done {
			return 0, io.EOF
		}
		b.mu.Lock()
		c := b.conn
		b.mu.Unlock()
		if c == nil {
			return 0, io.ErrClosedPipe
		}
		_, msg, err := c.ReadMessage()
		if err != nil && b.redial != nil && b.ctx.Err() == nil {
			// The reused socket was dead: dial a fresh one, once.
			redial := b.redial
			b.redial, b.full = nil, nil
			if old := b.disarm(); old != nil {
				old.Close()
			}
			if c, err = redial(); err != nil {
				return 0, err
			}
			b.mu.Lock()
			b.conn = c
			b.mu.Unlock()
			b.arm()
			continue
		}
		if err != nil {
			return 0, err
		}
		b.redial = nil
		typ := gjson.GetBytes(msg, "type").Str
		if full := b.full; full != nil {
			b.full = nil
			if typ == "error" && gjson.GetBytes(msg, "error.code").Str == "previous_response_not_found" {
				// The upstream forgot its response after all: send the
				// whole transcript on the same socket, as OpenAI's guide
				// says to recover.
				if err := c.WriteMessage(websocket.TextMessage, full); err != nil {
					return 0, err
				}
				continue
			}
		}
		switch typ {
		case "response.completed", "response.incomplete":
			b.done = true
			b.release(gjson.GetBytes(msg, "response.id").Str)
		case "response.failed", "error":
			b.done = true
		}
		if typ == "error" {
			// The socket's error carries its status and an error object;
			// the stream path reads the HTTP stream's error event shape.
			msg = protocol.ErrorEvent(protocol.Responses, int(gjson.GetBytes(msg, "status").Int()), gjson.GetBytes(msg, "error.message").Str)
			b.buf.Write(msg)
			continue
		}
		b.buf.Write(protocol.AppendEvent(nil, typ, msg))
	}
	return b.buf.Read(p)
}

// release hands the socket back to ups, unless the attempt's context
// already closed it.
func (b *socketBody) release(last string) {
	if c := b.disarm(); c != nil {
		b.ups.put(b.slot, c, last)
	}
}

func (b *socketBody) Close() error {
	b.mu.Lock()
	c := b.conn
	b.conn = nil
	b.stop()
	b.mu.Unlock()
	if c != nil {
		return c.Close()
	}
	return nil
}

// truncate cuts s to n bytes for a note, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
