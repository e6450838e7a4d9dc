package engine_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStreamEventNotHeldForTheNext: the relay gathers the events of one
// upstream read into one write, but never keeps an event back waiting for
// the upstream's next one. The upstream here sends its first text delta
// and then waits until the client has seen it; a relay that held the
// delta until more arrived would leave both sides waiting. Native
// (Anthropic to Anthropic) and converted (Anthropic to OpenAI Chat).
func TestStreamEventNotHeldForTheNext(t *testing.T) {
	for _, tc := range []struct {
		name, path, body string
	}{
		{"native", "/v1/messages", `{"model":"m1","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{"converted", "/v1/chat/completions", `{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fl := w.(http.Flusher)
				io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m1\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"+
					"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
					"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"zeroword \"}}\n\n")
				fl.Flush()
				// The peek ends at the first delta and writes it; the
				// second goes through the relay loop.
				time.Sleep(50 * time.Millisecond)
				io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"firstword\"}}\n\n")
				fl.Flush()
				select {
				case <-release:
				case <-time.After(10 * time.Second):
				case <-r.Context().Done():
					return
				}
				io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"secondword\"}}\n\n"+
					"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"+
					"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n"+
					"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
				fl.Flush()
			}))
			defer up.Close()
			cfg := strings.NewReplacer("{{URLA}}", `{url: "`+up.URL+`", protocols: [anthropic]}`, "{{URLB}}", up.URL, "{{FALLBACK}}", "false").Replace(failoverConfig)
			g := startGateway(t, cfg)
			req, _ := http.NewRequest("POST", g.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer "+testToken)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			lines := make(chan string)
			go func() {
				defer close(lines)
				br := bufio.NewReader(resp.Body)
				for {
					l, err := br.ReadString('\n')
					if err != nil {
						return
					}
					lines <- l
				}
			}()
			seen := func(word string, within time.Duration) bool {
				deadline := time.After(within)
				for {
					select {
					case l, ok := <-lines:
						if !ok {
							return false
						}
						if strings.Contains(l, word) {
							return true
						}
					case <-deadline:
						return false
					}
				}
			}
			if !seen("firstword", 5*time.Second) {
				t.Fatal("the first delta did not reach the client while the upstream waited for it to")
			}
			close(release)
			if !seen("secondword", 5*time.Second) {
				t.Fatal("the rest of the stream did not arrive")
			}
		})
	}
}

// TestStreamEventsThatArriveTogetherGoOutTogether: events the upstream
// sent in one burst reach the client in a few writes, not one write per
// event. The upstream here writes 40 events, each its own HTTP chunk, in
// one write of its socket; the gateway frames each of its writes as one
// chunk, so the chunks the client counts are the gateway's writes. A
// relay that flushed before every read of the body (one HTTP chunk, one
// event) made 40 of them.
func TestStreamEventsThatArriveTogetherGoOutTogether(t *testing.T) {
	const events = 40
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		var b strings.Builder
		b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		chunk := func(ev string) { fmt.Fprintf(&b, "%x\r\n%s\r\n", len(ev), ev) }
		chunk("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m1\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n")
		chunk("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
		for i := range events {
			chunk(fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"w%d \"}}\n\n", i))
		}
		chunk("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
		chunk("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":41}}\n\n")
		chunk("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		b.WriteString("0\r\n\r\n")
		io.WriteString(c, b.String()) // one write: the events arrive together
		time.Sleep(time.Second)       // keep the connection until the gateway read it all
	}()
	up := "http://" + ln.Addr().String()
	cfg := strings.NewReplacer("{{URLA}}", `{url: "`+up+`", protocols: [anthropic]}`, "{{URLB}}", up, "{{FALLBACK}}", "false").Replace(failoverConfig)
	g := startGateway(t, cfg)

	conn, err := net.Dial("tcp", strings.TrimPrefix(g.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"model":"m1","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	fmt.Fprintf(conn, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", testToken, len(body), body)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || len(resp.TransferEncoding) == 0 {
		t.Fatalf("status %d, transfer encoding %v", resp.StatusCode, resp.TransferEncoding)
	}
	// Count the chunks by hand (resp.Body would hide them).
	chunks, text := 0, ""
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d chunks: %v", chunks, err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		if err != nil {
			t.Fatalf("chunk size %q: %v", line, err)
		}
		if n == 0 {
			break
		}
		data := make([]byte, n+2)
		if _, err := io.ReadFull(br, data); err != nil {
			t.Fatal(err)
		}
		chunks++
		text += string(data[:n])
	}
	if !strings.Contains(text, fmt.Sprintf("w%d ", events-1)) || !strings.Contains(text, "message_stop") {
		t.Fatalf("the stream did not arrive whole:\n%s", text)
	}
	if chunks > 8 {
		t.Errorf("%d events that arrived together went out in %d writes; want a few", events+5, chunks)
	}
}
