package admin_test

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// TestChannelsShowDetection: a URL with no protocols, on an upstream that
// speaks only Chat, answers an Anthropic client after detection, and
// /admin/channels says so under urls[].detected (admin/API.md).
func TestChannelsShowDetection(t *testing.T) {
	cfg := strings.Replace(testConfig, `urls: [{url: "{{MOCK}}", protocols: [anthropic]}]`, `urls: ["{{MOCK}}"]`, 1)
	e := startWith(t, "", cfg, mockupstream.Options{Families: []string{mockupstream.OpenAI}})
	if st, body := e.proxy(t, "claude-x", false, ""); st != 200 || !strings.Contains(body, `"type":"message"`) {
		t.Fatalf("proxy: %d %s", st, body)
	}
	resp, body := e.call(t, "GET", "/admin/channels", bearer, "")
	if resp.StatusCode != 200 {
		t.Fatalf("/admin/channels: %d %s", resp.StatusCode, body)
	}
	urls := gjson.Get(body, `channels.#(name=="main").urls.0`)
	if got := urls.Get("protocols").Raw; got != "[]" {
		t.Errorf("protocols %s, want [] (as configured)", got)
	}
	if got := urls.Get("detected").Raw; got != `[{"client":"anthropic","protocol":"openai"}]` {
		t.Errorf("detected %s, want anthropic -> openai", got)
	}
	if got := gjson.Get(body, `channels.#(name=="main").cooldowns`).Raw; got != "[]" {
		t.Errorf("detection cooled %s", got)
	}
}
