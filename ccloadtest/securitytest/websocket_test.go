package securitytest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/tidwall/gjson"
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

// Finding: a warm-up (generate: false) for a model outside the token's
// allow-list was answered, skipped rpm_limit and left no log row. A
// warm-up is admitted like any turn (token models, limits) and logged;
// only the upstream call is left out.
func TestWebSocketWarmUpsObeyTheToken(t *testing.T) {
	m, up := startMock(t)
	sum := sha256.Sum256([]byte("sk-warm-token-0123456789"))
	limited := "  - {name: warm, token_sha256: " + hex.EncodeToString(sum[:]) + ", models: [claude-x], rpm_limit: 2}\n"
	s := start(t, config("", up, "")+limited)
	h := http.Header{}
	h.Set("Authorization", "Bearer sk-warm-token-0123456789")
	h.Set("OpenAI-Beta", "responses_websockets=2026-02-06")
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(s.URL, "http")+"/v1/responses", h)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	warm := func(model string) string {
		t.Helper()
		if err := c.WriteMessage(websocket.TextMessage, []byte(`{"type":"response.create","model":"`+model+`","generate":false,"input":"hi"}`)); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				t.Fatal(err)
			}
			switch typ := gjson.GetBytes(msg, "type").Str; typ {
			case "error", "response.completed":
				return typ + " " + gjson.GetBytes(msg, "status").Raw
			}
		}
	}
	for i, tc := range []struct{ model, want string }{
		{"gpt-x", "error 403"},              // not the token's model
		{"claude-x", "response.completed "}, // first of the two a minute
		{"claude-x", "response.completed "},
		{"claude-x", "error 429"}, // over rpm_limit
	} {
		if got := warm(tc.model); got != tc.want {
			t.Errorf("warm-up %d (%s): got %q, want %q", i+1, tc.model, got, tc.want)
		}
	}
	if rows := s.logs(t, 4); len(rows) != 4 {
		t.Errorf("log rows: %d, want one per warm-up", len(rows))
	}
	if n := len(m.Requests()); n != 0 {
		t.Errorf("warm-ups reached the upstream %d times", n)
	}
}

// Finding (duplicate keys, on the socket): a response.create frame with
// "input" twice is refused like an HTTP body with a key twice.
func TestWebSocketDuplicateKeysRefused(t *testing.T) {
	m, up := startMock(t)
	s := start(t, config("", up, ""))
	c := dialWS(t, s)
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"type":"response.create","model":"gpt-x","input":"hi","input":[{"role":"user","content":"bye"}]}`)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, msg, err := c.ReadMessage()
	if err != nil || gjson.GetBytes(msg, "type").Str != "error" || !strings.Contains(string(msg), "twice") {
		t.Fatalf("got %v %s, want an error event naming the key", err, msg)
	}
	if n := len(m.Requests()); n != 0 {
		t.Errorf("the frame reached the upstream %d times", n)
	}
}
