package engine_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestLargeAnswersArriveWhole: answers larger than every buffer on the way
// (the server's 2 KiB write buffer, the SSE reader's pooled 1 KiB buffer,
// the one-byte read that waits for the next event) reach the client byte
// for byte: a 10 KB non-stream answer, and a stream with an event of 6 KB
// and one that arrives in two writes cut inside its data line.
func TestLargeAnswersArriveWhole(t *testing.T) {
	bigText := strings.Repeat("0123456789", 1000)
	whole := `{"id":"msg_1","type":"message","role":"assistant","model":"m1","content":[{"type":"text","text":"` + bigText +
		`"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":2500}}`
	cut := sseTextDelta(strings.Repeat("abcdefghij", 300))
	stream := []string{
		sseMessageStart + sseBlockStart + sseTextDelta(strings.Repeat("x", 6000)),
		cut[:len(cut)/2],
		cut[len(cut)/2:] + sseTextDelta("small"),
		sseBlockStop + sseMessageDelta(2) + sseMessageStop,
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(whole)))
			io.WriteString(w, whole)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, part := range stream {
			io.WriteString(w, part)
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()
	g := gatewayBefore(t, up.URL)

	for _, tc := range []struct {
		name, body, want string
	}{
		{"non-stream", `{"model":"m1","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, whole},
		{"stream", `{"model":"m1","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, strings.Join(stream, "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, got := rawPost(t, g.URL+"/v1/messages", tc.body)
			if resp.StatusCode != http.StatusOK || string(got) != tc.want {
				t.Fatalf("status %d, %d bytes; want 200 and the upstream's %d bytes as sent\ngot:  %.200s\nwant: %.200s", resp.StatusCode, len(got), len(tc.want), got, tc.want)
			}
		})
	}
}
