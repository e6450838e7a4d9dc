package securitytest

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// dialWS opens a Responses WebSocket with permessage-deflate offered.
func dialWS(t *testing.T, s *server) *websocket.Conn {
	t.Helper()
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	h.Set("OpenAI-Beta", "responses_websockets=2026-02-06")
	d := websocket.Dialer{EnableCompression: true, HandshakeTimeout: 10 * time.Second}
	c, _, err := d.Dial("ws"+strings.TrimPrefix(s.URL, "http")+"/v1/responses", h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Finding: a frame was bounded by its compressed size: one 783 KB frame
// (limit 1 MiB) inflated to 768 MiB, the server grew from 29 MiB to 3 GiB,
// and the turn was answered 22 s later instead of closing with 1009. A
// frame is now bounded by max_body_bytes after inflation.
func TestWebSocketInflatedFrameIsBounded(t *testing.T) {
	m, up := startMock(t)
	s := start(t, config("  max_body_bytes: 64KiB", up, ""))
	c := dialWS(t, s)
	c.EnableWriteCompression(true)
	c.SetCompressionLevel(9)
	// 4 MiB of one letter deflates to a few KiB: far under the limit on
	// the wire, 64 times over it inflated.
	big := `{"type":"response.create","model":"gpt-x","input":"` + strings.Repeat("a", 4<<20) + `"}`
	if err := c.WriteMessage(websocket.TextMessage, []byte(big)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, msg, err := c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseMessageTooBig {
		t.Fatalf("got %v %.200s, want close 1009", err, msg)
	}
	if n := len(m.Requests()); n != 0 {
		t.Errorf("the frame reached the upstream %d times", n)
	}
}
