package engine

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/fasthttp/websocket"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"ccload/protocol"
)

// sendSocket tries a WebSocket turn on a channel marked `websockets: true`
// over a native upstream Responses WebSocket (http->ws, https->wss, the
// same path): the body goes up as one response.create frame and the
// events that come back are handed to the stream path as SSE, so the
// peek, failover before output, relay and usage are the HTTP path's. When
// the upstream refuses the upgrade the turn goes over HTTP/SSE instead
// (the attempt's notes say so).
func (e *Engine) sendSocket(rq upstreamRequest, note func(string)) sent {
	u := rq.url
	switch {
	case strings.HasPrefix(u, "https://"):
		u = "wss://" + strings.TrimPrefix(u, "https://")
	case strings.HasPrefix(u, "http://"):
		u = "ws://" + strings.TrimPrefix(u, "http://")
	}
	h := http.Header{}
	rq.header(h)
	for _, k := range []string{"Content-Type", "Content-Length", "Accept-Encoding", "Connection", "Upgrade"} {
		h.Del(k)
	}
	h.Set("OpenAI-Beta", "responses_websockets=2026-02-06")
	d := websocket.Dialer{HandshakeTimeout: 30e9}
	conn, resp, err := d.DialContext(rq.ctx, u, h)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		note("websocket upstream refused (" + truncate(err.Error(), 120) + "), HTTP/SSE used")
		return e.send(rq)
	}
	frame, _ := sjson.SetBytes(rq.body, "type", "response.create")
	frame, _ = sjson.DeleteBytes(frame, "stream")
	if err := conn.WriteMessage(websocket.TextMessage, frame); err != nil {
		conn.Close()
		note("websocket upstream write failed, HTTP/SSE used")
		return e.send(rq)
	}
	stop := context.AfterFunc(rq.ctx, func() { conn.Close() })
	return sent{resp: &upstreamResponse{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:       &socketBody{conn: conn, stop: stop},
		ctx:        rq.ctx,
	}}
}

// socketBody reads an upstream Responses WebSocket as the SSE stream the
// HTTP path would have carried: each text frame becomes one event named
// by its type. It ends after the response's terminal event.
type socketBody struct {
	conn *websocket.Conn
	stop func() bool
	buf  bytes.Buffer
	done bool
}

func (b *socketBody) Read(p []byte) (int, error) {
	for b.buf.Len() == 0 {
		if b.done {
			return 0, io.EOF
		}
		_, msg, err := b.conn.ReadMessage()
		if err != nil {
			return 0, err
		}
		typ := gjson.GetBytes(msg, "type").Str
		switch typ {
		case "response.completed", "response.failed", "response.incomplete", "error":
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

func (b *socketBody) Close() error {
	b.stop()
	return b.conn.Close()
}
