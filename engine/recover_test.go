package engine_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/engine"
)

// panicTransport sends upstream requests for real, except that a request
// whose body says "panic-send" panics in RoundTrip (inside the attempt, on
// the handler's goroutine), and one that says "panic-relay" gets a body
// that panics once the stream is under way (inside the relay, on the body
// writer's goroutine).
type panicTransport struct{ next http.RoundTripper }

func (p panicTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	if bytes.Contains(body, []byte("panic-send")) {
		panic("injected: panic-send")
	}
	resp, err := p.next.RoundTrip(req)
	if err == nil && bytes.Contains(body, []byte("panic-relay")) {
		resp.Body = &panicBody{ReadCloser: resp.Body}
	}
	return resp, err
}

// panicBody passes the stream through up to the end of its first content
// delta event, then panics on the next read.
type panicBody struct {
	io.ReadCloser
	pending []byte
	done    bool // the first delta went out
}

func (b *panicBody) Read(p []byte) (int, error) {
	if b.done && len(b.pending) == 0 {
		panic("injected: panic-relay")
	}
	if len(b.pending) == 0 {
		buf := make([]byte, 64<<10)
		n, err := b.ReadCloser.Read(buf)
		b.pending = buf[:n]
		if i := bytes.Index(b.pending, []byte("content_block_delta")); i >= 0 {
			if j := bytes.Index(b.pending[i:], []byte("\n\n")); j >= 0 {
				b.pending, b.done = b.pending[:i+j+2], true
			}
		}
		if n == 0 {
			return 0, err
		}
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

const panicConfig = `version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: "{{DB}}"}
channels:
  - {name: a, urls: [{url: "{{MOCK}}", protocols: [anthropic]}], keys: [key-a1-000000], models: [m1]}
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
`

// TestPanicCostsOnlyItsRequest: a panic on the handler path answers 500 in
// the client's shape, one in the stream relay ends the stream with an error
// event; both get a log row, and the server keeps serving.
func TestPanicCostsOnlyItsRequest(t *testing.T) {
	_, u := startMock(t, mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		rep := mockupstream.DefaultReply(r)
		rep.Text = "one two three four five six" // several deltas, so the relay reads after the first
		return rep
	}})
	g := startGatewayWith(t, replaceMock(panicConfig, u), engine.Options{Transport: panicTransport{next: http.DefaultTransport}})
	hdr := map[string]string{"x-api-key": testToken, "anthropic-version": "2023-06-01", "x-request-id": ""}
	send := func(id, text string, stream bool) (*http.Response, string) {
		hdr["x-request-id"] = id
		body := `{"model":"m1","max_tokens":8,"stream":` + map[bool]string{false: "false", true: "true"}[stream] +
			`,"messages":[{"role":"user","content":"` + text + `"}]}`
		return post(t, g.URL+"/v1/messages", body, hdr)
	}

	resp, body := send("send", "panic-send", false)
	if resp.StatusCode != 500 || !strings.Contains(body, `"type":"error"`) || !strings.Contains(body, "internal error") {
		t.Fatalf("panic on the handler path: %d %s, want 500 in Anthropic's error shape", resp.StatusCode, body)
	}
	resp, body = send("relay", "panic-relay", true)
	if resp.StatusCode != 200 || !strings.Contains(body, "event: error") || !strings.Contains(body, "internal error") {
		t.Fatalf("panic in the relay: %d %s, want the stream ended by an error event", resp.StatusCode, body)
	}
	if resp, body = send("after", "hello", false); resp.StatusCode != 200 {
		t.Fatalf("after the panics: %d %s", resp.StatusCode, body)
	}

	rows := g.waitLogs(t, 3)
	byID := map[string]int{}
	for _, r := range rows {
		byID[r.RequestID]++
		switch r.RequestID {
		case "send", "relay":
			if r.Status != 500 || !strings.Contains(r.Error, "panic: injected") {
				t.Errorf("row %s: status %d error %q", r.RequestID, r.Status, r.Error)
			}
		}
	}
	if len(rows) != 3 || byID["send"] != 1 || byID["relay"] != 1 || byID["after"] != 1 {
		t.Fatalf("rows per request %v, want one each", byID)
	}
	if n := g.Engine.InFlight(); n != 0 {
		t.Fatalf("in flight after the panics: %d", n)
	}
}
