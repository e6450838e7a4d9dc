package admin_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/store"
)

// chatEvents splits a channel chat's SSE answer into its deltas and done.
func chatEvents(t *testing.T, body string) (string, adminapi.ChatDone, int) {
	t.Helper()
	var text strings.Builder
	var done adminapi.ChatDone
	deltas, name := 0, ""
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			name = v
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		switch name {
		case "delta":
			var d adminapi.ChatDelta
			if err := json.Unmarshal([]byte(data), &d); err != nil {
				t.Fatalf("delta %q: %v", data, err)
			}
			deltas++
			text.WriteString(d.Text)
		case "done":
			if err := json.Unmarshal([]byte(data), &done); err != nil {
				t.Fatalf("done %q: %v", data, err)
			}
		default:
			t.Fatalf("unexpected event %q", name)
		}
	}
	return text.String(), done, deltas
}

// TestChannelChat: POST /admin/channels/{name}/chat streams the model's
// answer from the mock upstream, through the normal request path (the
// request is logged under the channel-test token), with the operator's
// prompt.
func TestChannelChat(t *testing.T) {
	e := start(t)
	h := map[string]string{"Authorization": bearer["Authorization"], "Content-Type": "application/json"}

	resp, body := e.call(t, "POST", "/admin/channels/main/chat", h, `{"model":"claude-y","prompt":"Name three colours"}`)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("chat: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	text, done, deltas := chatEvents(t, body)
	if text != mockupstream.DefaultText || deltas < 2 {
		t.Errorf("streamed %q in %d deltas, want %q in several", text, deltas, mockupstream.DefaultText)
	}
	if !done.OK || done.Status != 200 || done.Channel != "main" || done.Model != "claude-y" || done.Upstream != "claude-y-2026" ||
		done.Protocol != "anthropic" || done.Attempts != 1 || !strings.HasPrefix(done.RequestID, "channel-test-") || done.Error != "" {
		t.Errorf("done = %+v", done)
	}
	reqs := e.Mock.Requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(string(last.Body), "Name three colours") || last.Model != "claude-y-2026" || !last.Stream {
		t.Errorf("upstream got %s", last.Body)
	}
	for _, s := range secrets {
		if strings.Contains(body, s) {
			t.Errorf("the chat answer holds the secret %q", s)
		}
	}
	e.waitRows(t, 1)
	rows, err := e.Store.QueryLogs(t.Context(), store.LogQuery{Token: engine.ChatTestToken})
	if err != nil || len(rows) != 1 || rows[0].RequestID != done.RequestID || rows[0].Channel != "main" || rows[0].Status != 200 {
		t.Errorf("log rows of the chat: %v %+v", err, rows)
	}

	// The default prompt, and a failing upstream: done says why.
	resp, body = e.call(t, "POST", "/admin/channels/main/chat", h, `{"model":"claude-x-mock-fail-400"}`)
	if resp.StatusCode != 400 {
		// claude-x-mock-fail-400 is not a model of main: refused before sending.
		t.Errorf("unknown model: %d %s", resp.StatusCode, body)
	}
	resp, body = e.call(t, "POST", "/admin/channels/nope/chat", h, `{}`)
	if resp.StatusCode != 404 {
		t.Errorf("unknown channel: %d %s", resp.StatusCode, body)
	}
	resp, body = e.call(t, "POST", "/admin/channels/main/chat", h, `{}`)
	if text, done, _ := chatEvents(t, body); resp.StatusCode != 200 || text != mockupstream.DefaultText || !done.OK {
		t.Errorf("default prompt: %d %q %+v", resp.StatusCode, text, done)
	}
	if reqs := e.Mock.Requests(); !strings.Contains(string(reqs[len(reqs)-1].Body), engine.DefaultChatPrompt) {
		t.Errorf("default prompt not sent: %s", reqs[len(reqs)-1].Body)
	}
}
