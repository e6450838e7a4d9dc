package securitytest

import (
	"testing"
)

// Finding: OpenAI-Organization, OpenAI-Project, X-Goog-User-Project and
// Content-Encoding reached the upstream as the client sent them. The first
// three pick the account the channel's key is billed to: a wrong one makes
// the provider refuse the key, which then cools. Content-Encoding describes
// a body ccload has already read as plain JSON and forwards as such. None
// is forwarded; a channel's header rewrite rule may still set them.
func TestAccountHeadersAreNotForwarded(t *testing.T) {
	m, up := startMock(t)
	extra := replaceOnce(config("", up, ""), "    models: [claude-x, gemini-x, gpt-x]\n",
		"    models: [claude-x, gemini-x, gpt-x]\n    rewrite:\n      headers:\n        - {action: override, name: OpenAI-Project, value: proj-of-the-channel}\n")
	s := start(t, extra)
	hdr := map[string]string{
		"Authorization":       "Bearer " + token,
		"OpenAI-Organization": "org-of-the-client",
		"OpenAI-Project":      "proj-of-the-client",
		"X-Goog-User-Project": "gcp-of-the-client",
		"Content-Encoding":    "identity",
	}
	chat := `{"model":"gpt-x","messages":[{"role":"user","content":"hi"}]}`
	resp, body := do(t, "POST", s.URL+"/v1/chat/completions", chat, hdr)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	reqs := m.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream got %d requests", len(reqs))
	}
	got := reqs[0].Header
	for _, h := range []string{"OpenAI-Organization", "X-Goog-User-Project", "Content-Encoding"} {
		if v := got.Get(h); v != "" {
			t.Errorf("forwarded %s: %s", h, v)
		}
	}
	if v := got.Get("OpenAI-Project"); v != "proj-of-the-channel" {
		t.Errorf("OpenAI-Project = %q, want the channel's rewrite rule's value", v)
	}
}
