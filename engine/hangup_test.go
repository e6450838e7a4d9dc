package engine_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/store"
)

// The gateway watches each client connection for a hang-up (engine/listen):
// a request waiting on a silent upstream is cancelled when its client
// leaves, not at the first write of an answer nobody reads.

// sseHead is what opens an Anthropic stream without content: the gateway
// holds it back and keeps waiting for the first content event.
const sseHead = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m1\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"

const sseHeaders = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"

// hangUpCase sends a request (a stream when stream is set) on a raw
// connection to a gateway (with opts) whose upstream answers with head
// and then goes silent; leave decides when the client closes its
// connection.
func hangUpCase(t *testing.T, opts engine.Options, head string, stream bool, leave func(br *bufio.Reader)) {
	if row := hangUp(t, opts, head, stream, leave); row.Status != 499 || row.Attempts != 1 {
		t.Errorf("log row: status %d after %d attempts (%s), want 499 after 1", row.Status, row.Attempts, row.Error)
	}
}

// hangUp runs hangUpCase's exchange and returns the request's log row.
func hangUp(t *testing.T, opts engine.Options, head string, stream bool, leave func(br *bufio.Reader)) store.LogRow {
	t.Helper()
	rest, closed, armRelease := closedByGateway(t)
	reached := make(chan struct{}, 1)
	up := rawUpstream(t, func(c net.Conn) {
		if answering(c, head) {
			select {
			case reached <- struct{}{}:
			default:
			}
			rest(c)
		}
	})
	cfg := strings.ReplaceAll(clientsConfig, "first_byte: 300ms", "first_byte: 1m, stream: 1m, non_stream: 1m")
	g := startGatewayWith(t, strings.ReplaceAll(cfg, "{{URL}}", up), opts)
	armRelease()

	c, err := net.Dial("tcp", strings.TrimPrefix(g.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"model":"m1","max_tokens":8,"stream":%t,"messages":[{"role":"user","content":"hi"}]}`, stream)
	fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: ccload\r\nx-api-key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", testToken, len(body), body)
	// The gateway is waiting upstream once the upstream has the request.
	select {
	case <-reached:
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not reach the upstream")
	}
	leave(bufio.NewReader(c))
	c.Close()

	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream request was not cancelled after the client hung up")
	}
	rows := g.waitLogs(t, 1)
	if cd := g.Engine.Cooldowns().List(); len(cd) != 0 {
		t.Errorf("a client hanging up cooled %v", cd)
	}
	return rows[0]
}

// TestHangUpAfterTheLastEventIsNotAnAbandon: the client read the whole
// stream, its closing event included, and closed the connection before
// the upstream closed its own. The client had the whole answer: the row
// is a success with its usage, not a 499 (passthrough_test saw this race
// now and then; here the upstream never closes).
func TestHangUpAfterTheLastEventIsNotAnAbandon(t *testing.T) {
	whole := sseMessageStart + sseBlockStart + sseTextDelta("all of it") + sseBlockStop + sseMessageDelta(2) + sseMessageStop
	row := hangUp(t, engine.Options{}, sseHeaders+chunk(whole), true, func(br *bufio.Reader) {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended before message_stop: %v", err)
			}
			if strings.Contains(line, `"type":"message_stop"`) {
				return
			}
		}
	})
	if row.Status != 200 || row.OutputTokens != 2 || row.Error != "" {
		t.Errorf("log row: status %d, %d output tokens, error %q; want 200, 2 and none", row.Status, row.OutputTokens, row.Error)
	}
}

// leaveNow is a client that leaves as soon as the gateway waits upstream.
func leaveNow(*bufio.Reader) {}

// TestHangUpBeforeContentCancelsUpstream: the client leaves while the
// gateway waits for the stream's first content (nothing was sent to it).
func TestHangUpBeforeContentCancelsUpstream(t *testing.T) {
	hangUpCase(t, engine.Options{}, sseHeaders+chunk(sseHead), true, leaveNow)
}

// TestHangUpDuringSilentStreamCancelsUpstream: the client leaves a
// committed stream while the upstream is silent (a model thinking).
func TestHangUpDuringSilentStreamCancelsUpstream(t *testing.T) {
	hangUpCase(t, engine.Options{}, sseHeaders+chunk(sseStart), true, func(br *bufio.Reader) {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended before its first content: %v", err)
			}
			if strings.Contains(line, `"text":"early"`) {
				return
			}
		}
	})
}

// TestHangUpWhileANonStreamBodyStallsCancelsUpstream: the client of a
// non-stream request leaves while the upstream's answer stops halfway.
func TestHangUpWhileANonStreamBodyStallsCancelsUpstream(t *testing.T) {
	hangUpCase(t, engine.Options{}, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"id\":\"msg_1\",", false, leaveNow)
}

// TestHangUpBeforeHeadersCancelsUpstream: an upstream that has not
// answered at all is dropped the moment the client leaves, through the
// HTTP/1.1 client (plain http://, which closes the connection under its
// wait for the headers) and through net/http (the client of https and
// proxied upstreams, here injected), before first_byte (1m here) ends it.
func TestHangUpBeforeHeadersCancelsUpstream(t *testing.T) {
	for name, opts := range map[string]engine.Options{"h1": {}, "net/http": {Transport: &http.Transport{}}} {
		t.Run(name, func(t *testing.T) {
			hangUpCase(t, opts, "", false, leaveNow) // the upstream answers nothing
		})
	}
}
