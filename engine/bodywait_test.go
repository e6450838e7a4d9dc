package engine_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/engine"
)

// The upstream body of a streamed answer on a pooled connection is made
// ready for a wait at its first read of the socket (fastBody.arm): the
// header deadline lifted, the attempt's end hooked to interrupt the read.
// These tests stall an SSE body past the point where each matters.

// sseStart is what the gateway needs to start its answer: the first text.
const sseStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m1\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"early\"}}\n\n"

const sseRest = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"late\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

// rawUpstream serves each connection with serve, on a loopback listener
// closed at the end of the test, and returns its base URL.
func rawUpstream(t *testing.T, serve func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// answering reads one request from c and writes head: an upstream that
// then does what the test needs with c.
func answering(c net.Conn, head string) bool {
	var req fasthttp.Request
	if err := req.Read(bufio.NewReader(c)); err != nil {
		return false
	}
	_, err := io.WriteString(c, head)
	return err == nil
}

// stallingUpstream answers each request with SSE headers and sseStart in
// one write, then runs rest on the connection.
func stallingUpstream(t *testing.T, rest func(c net.Conn)) string {
	return sseUpstream(t, sseStart, rest)
}

// sseUpstream answers each request with SSE headers and first in one
// write, then runs rest on the connection.
func sseUpstream(t *testing.T, first string, rest func(c net.Conn)) string {
	return rawUpstream(t, func(c net.Conn) {
		if answering(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+chunk(first)) {
			rest(c)
		}
	})
}

// closedByGateway is an upstream's rest that waits until the gateway
// closes the connection and then closes the channel it returns, or until
// the test ends.
func closedByGateway(t *testing.T) (rest func(c net.Conn), closed <-chan struct{}, arm func()) {
	done, release := make(chan struct{}), make(chan struct{})
	rest = func(c net.Conn) {
		gone := make(chan struct{})
		go func() {
			io.Copy(io.Discard, c) // returns when the gateway closes the connection
			close(gone)
		}()
		select {
		case <-gone:
			close(done)
		case <-release: // the test failed: let the gateway shut down
		}
	}
	// arm registers the release; call it after starting the gateway, so
	// that it runs before the gateway's cleanup.
	arm = func() { t.Cleanup(func() { close(release) }) }
	return rest, done, arm
}

// chunk is s as one HTTP/1.1 chunk.
func chunk(s string) string { return strconv.FormatInt(int64(len(s)), 16) + "\r\n" + s + "\r\n" }

// TestStreamOutlivesTheHeaderDeadline: first_byte bounds the wait for the
// answer to start, and the fast client enforces it as a read deadline on
// the connection; once events flow, a pause longer than first_byte must
// not cut the stream.
func TestStreamOutlivesTheHeaderDeadline(t *testing.T) {
	up := stallingUpstream(t, func(c net.Conn) {
		time.Sleep(900 * time.Millisecond) // first_byte is 300ms
		io.WriteString(c, chunk(sseRest)+"0\r\n\r\n")
	})
	url := startWithOptions(t, strings.ReplaceAll(clientsConfig, "{{URL}}", up), engine.Options{})
	resp, body := post(t, url+"/v1/messages", `{"model":"m1","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, map[string]string{"x-api-key": testToken})
	if resp.StatusCode != 200 || !strings.Contains(body, `"text":"late"`) || !strings.Contains(body, "message_stop") {
		t.Fatalf("status %d, stream cut before the late events:\n%s", resp.StatusCode, body)
	}
}

// TestStalledStreamEndsAtTheStreamTimeout: a relay waiting on a silent
// upstream is interrupted when the attempt's stream timer fires, and the
// upstream connection is closed. first_byte is far off, so neither the
// header deadline nor anything but the hook on the attempt's context can
// end the wait.
func TestStalledStreamEndsAtTheStreamTimeout(t *testing.T) {
	rest, closed, armRelease := closedByGateway(t)
	up := stallingUpstream(t, rest)
	cfg := strings.ReplaceAll(clientsConfig, "first_byte: 300ms", "first_byte: 1m, stream: 1s")
	url := startWithOptions(t, strings.ReplaceAll(cfg, "{{URL}}", up), engine.Options{})
	armRelease()
	req, _ := http.NewRequest("POST", url+"/v1/messages", strings.NewReader(`{"model":"m1","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("x-api-key", testToken)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("the stream did not end at the stream timeout: %v", err)
	}
	if body := string(b); resp.StatusCode != 200 || !strings.Contains(body, `"text":"early"`) || strings.Contains(body, "message_stop") {
		t.Fatalf("status %d, want the early events and no end:\n%s", resp.StatusCode, body)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream connection stayed open after the stream timeout")
	}
}

// TestNonStreamBodyStallEndsAtFirstByte: a non-stream answer's headers
// arrive in time and its body stops halfway. Reading it has to wait for
// the socket, which starts the attempt's timers; first_byte, which for a
// non-stream answer runs until the whole body is in, ends the wait.
func TestNonStreamBodyStallEndsAtFirstByte(t *testing.T) {
	release := make(chan struct{})
	up := rawUpstream(t, func(c net.Conn) {
		if answering(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"id\":\"msg_1\",") {
			<-release
		}
	})
	url := startWithOptions(t, strings.ReplaceAll(clientsConfig, "{{URL}}", up), engine.Options{})
	t.Cleanup(func() { close(release) }) // before the gateway's cleanup
	req, _ := http.NewRequest("POST", url+"/v1/messages", strings.NewReader(`{"model":"m1","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("x-api-key", testToken)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("no answer while the upstream body stalls: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 504 || !strings.Contains(string(b), "first_byte") {
		t.Fatalf("status %d %s, want 504 naming first_byte", resp.StatusCode, b)
	}
}

// TestHeaderTimeoutNamesFirstByte: an upstream that never answers is cut
// at first_byte by the fasthttp client's header deadline, with no timer
// running; the failure still names the timeout it stood for.
func TestHeaderTimeoutNamesFirstByte(t *testing.T) {
	up := rawUpstream(t, func(c net.Conn) { io.Copy(io.Discard, c) }) // never answers
	url := startWithOptions(t, strings.ReplaceAll(clientsConfig, "{{URL}}", up), engine.Options{})
	resp, body := post(t, url+"/v1/messages", `{"model":"m1","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, map[string]string{"x-api-key": testToken})
	if resp.StatusCode != 504 || !strings.Contains(body, "first_byte") {
		t.Fatalf("status %d %s, want 504 naming first_byte", resp.StatusCode, body)
	}
}
