package securitytest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// waitClosed reads from conn until the server closes it (EOF, reset, or a
// response followed by a close) and fails the test if it is still open
// after limit. It returns what the server sent.
func waitClosed(t *testing.T, conn net.Conn, limit time.Duration) string {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(limit))
	b, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %s (got %q)", limit, b)
	}
	return string(b)
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Finding: no read deadlines; half a header keeps a connection forever.
func TestHalfHeaderIsCut(t *testing.T) {
	s := start(t, config("  header_timeout: 1s", "http://127.0.0.1:9", ""))
	c := dial(t, s.Addr)
	fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: %s\r\n", token)
	waitClosed(t, c, 15*time.Second)
}

// Finding: half a body keeps a connection (and its buffer) forever.
func TestHalfBodyIsCut(t *testing.T) {
	s := start(t, config("  body_timeout: 1s", "http://127.0.0.1:9", ""))
	c := dial(t, s.Addr)
	fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\":", token)
	got := waitClosed(t, c, 15*time.Second)
	if got != "" && !strings.Contains(got, " 408 ") {
		t.Fatalf("want a 408 or a plain close, got %q", got)
	}
}

// Finding: the body is buffered before the token is checked; 20
// unauthenticated connections announcing 10 MiB grew the server by 300 MB.
// Without a valid token the server answers 401 from the headers alone.
func TestUnauthenticatedBodyIsNotRead(t *testing.T) {
	s := start(t, config("", "http://127.0.0.1:9", ""))
	for _, hdr := range []string{"", "x-api-key: wrong-token\r\n"} {
		c := dial(t, s.Addr)
		fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"model\":", hdr, 10<<20)
		c.SetReadDeadline(time.Now().Add(15 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("no answer before the body (%q): %v", hdr, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 401 || !strings.Contains(string(b), "authentication_error") {
			t.Fatalf("%q: got %d %s, want the Anthropic 401", hdr, resp.StatusCode, b)
		}
	}
}

// Finding: any number of connections per client.
func TestConnectionsPerIPAreCapped(t *testing.T) {
	s := start(t, config("  max_conns_per_ip: 2", "http://127.0.0.1:9", ""))
	held := []net.Conn{dial(t, s.Addr), dial(t, s.Addr)}
	for _, c := range held { // make sure both are being served
		fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("held connection: %v %v", resp, err)
		}
	}
	c := dial(t, s.Addr)
	fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err == nil && resp.StatusCode != 429 {
		t.Fatalf("third connection from one address served: %d", resp.StatusCode)
	}
}

// stallUpstream streams Anthropic SSE in 32 KiB deltas until its client
// goes away, then closes cancelled.
func stallUpstream(t *testing.T) (url string, cancelled <-chan struct{}) {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n")
		fmt.Fprint(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
		chunk := strings.Repeat("x", 32<<10)
		for {
			_, err := fmt.Fprintf(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"%s\"}}\n\n", chunk)
			fl.Flush()
			if err != nil || r.Context().Err() != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, done
}

// Finding: a client that stops reading a stream keeps its request in
// flight, its slots and the upstream connection until it closes the socket.
func TestStalledStreamReaderIsCut(t *testing.T) {
	up, cancelled := stallUpstream(t)
	s := start(t, config("  stream_write_timeout: 1s", up, ""))
	c := dial(t, s.Addr)
	c.(*net.TCPConn).SetReadBuffer(4096)
	body := `{"model":"claude-x","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", token, len(body), body)
	// Read nothing more: the server's socket buffers fill and its writes stall.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	select {
	case <-cancelled:
	case <-ctx.Done():
		t.Fatal("the upstream request was not cancelled while the client stopped reading")
	}
	rows := s.logs(t, 1)
	if rows[0].Status != 499 || !strings.Contains(rows[0].Error, "stopped reading") {
		t.Fatalf("row: status %d error %q, want 499 for a client that stopped reading", rows[0].Status, rows[0].Error)
	}
}

// Finding: behind a load balancer every client arrives from the balancer's
// address, and the per-address cap (256 by default) refused the 257th
// stream with fasthttp's 429 even with that address in trusted_proxies.
// A trusted proxy's connections are not capped as one client's.
func TestTrustedProxyConnectionsAreNotCapped(t *testing.T) {
	s := start(t, config("  max_conns_per_ip: 2\n  trusted_proxies: [\"127.0.0.0/8\"]", "http://127.0.0.1:9", ""))
	for i := range 6 {
		c := dial(t, s.Addr) // held open: each counts until the test ends
		fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 198.51.100.%d\r\n\r\n", i+1)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("connection %d through the trusted proxy: %v %v", i+1, resp, err)
		}
	}
}
