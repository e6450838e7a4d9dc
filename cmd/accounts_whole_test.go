package cmd

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// TestCodexAccountWholeAnswers: the Codex backend only streams (the mock
// refuses stream: false as the real one does), so a client of any family
// that asks for one whole answer gets the backend's stream assembled into
// its own non-stream shape, with the usage counted.
func TestCodexAccountWholeAnswers(t *testing.T) {
	e := newAcctEnv(t, time.Hour)
	e.importAuth(t, "alice", "acct-a")
	e.importAuth(t, "bob", "acct-b")
	base, stop := e.serve(t)
	defer stop()

	cases := []struct {
		family, path, body, text string
		header                   map[string]string
	}{
		{"responses", "/v1/responses", `{"model":"gpt-5.4","instructions":"be brief","input":"hi","stream":false}`,
			"output.#(type==\"message\").content.0.text", map[string]string{"Authorization": "Bearer sk-client-token"}},
		{"chat", "/v1/chat/completions", `{"model":"gpt-5.4","messages":[{"role":"user","content":"hi"}]}`,
			"choices.0.message.content", map[string]string{"Authorization": "Bearer sk-client-token"}},
		{"anthropic", "/v1/messages", `{"model":"gpt-5.4","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`,
			"content.#(type==\"text\").text", map[string]string{"x-api-key": "sk-client-token", "anthropic-version": "2023-06-01"}},
		{"gemini", "/v1beta/models/gpt-5.4:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
			"candidates.0.content.parts.0.text", map[string]string{"x-goog-api-key": "sk-client-token"}},
	}
	for _, c := range cases {
		req, _ := http.NewRequest("POST", base+c.path, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		code, ct, body := doRequest(t, req)
		if code != 200 || !strings.HasPrefix(ct, "application/json") || gjson.Get(body, c.text).String() != mockupstream.DefaultText {
			t.Errorf("%s non-stream: %d %s, want 200 JSON with %q at %s:\n%s", c.family, code, ct, mockupstream.DefaultText, c.text, body)
		}
	}
	calls := e.backend.Calls("acct-a") + e.backend.Calls("acct-b")
	if calls != len(cases) {
		t.Errorf("backend answered %d requests, want %d (one per client request, none refused)", calls, len(cases))
	}
	for _, q := range e.backend.Inner.Requests() {
		if !gjson.GetBytes(q.Body, "stream").Bool() {
			t.Errorf("a request reached the backend without stream: true: %s", q.Body)
		}
	}
}

func doRequest(t *testing.T, req *http.Request) (int, string, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}
