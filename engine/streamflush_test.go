package engine_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
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
