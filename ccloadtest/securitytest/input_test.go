package securitytest

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

func startMock(t *testing.T) (*mockupstream.Server, string) {
	t.Helper()
	m := mockupstream.New(mockupstream.Options{})
	up, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, up
}

// noCooldowns fails if the server has stored any cooldown.
func noCooldowns(t *testing.T, s *server) {
	t.Helper()
	resp, body := adminGet(t, s, "/admin/cooldowns")
	if resp.StatusCode != 200 || strings.Contains(body, `"scope"`) {
		t.Fatalf("cooldowns after a client fault: %d %s", resp.StatusCode, body)
	}
}

// Finding: credential-like client headers and headers named in Connection
// reach the upstream.
func TestCredentialHeadersAreNotForwarded(t *testing.T) {
	m, up := startMock(t)
	s := start(t, config("", up, ""))
	hdr := map[string]string{
		"x-api-key": token, "anthropic-version": "2023-06-01", "anthropic-beta": "kept-beta",
		"Proxy-Authorization": "Basic cHJveHk6cHc=", "Anthropic-Api-Key": "client-secret-1",
		"X-Upstream-Key": "client-secret-2", "X-Auth-Token": "client-secret-3", "Api-Key": "client-secret-4",
		"Connection": "keep-alive, X-Hop-Secret", "X-Hop-Secret": "client-secret-5",
	}
	resp, body := do(t, "POST", s.URL+"/v1/messages", anthropicBody, hdr)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	reqs := m.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream got %d requests", len(reqs))
	}
	got := reqs[0].Header
	if got.Get("anthropic-beta") != "kept-beta" {
		t.Errorf("anthropic-beta not forwarded: %v", got)
	}
	for k, vs := range got {
		for _, v := range vs {
			if strings.Contains(v, "client-secret") || strings.Contains(v, token) || strings.EqualFold(k, "Proxy-Authorization") {
				t.Errorf("forwarded %s: %s", k, v)
			}
		}
	}
}

// Finding: a header name invalid for HTTP is forwarded, net/http refuses
// it, the URL cools for a minute and the 502 shows the upstream URL. Any
// token holder could cool every URL of every channel.
func TestInvalidHeaderCoolsNothing(t *testing.T) {
	_, up := startMock(t)
	s := start(t, config("", up, ""))
	host := strings.TrimPrefix(up, "http://")
	for _, h := range []string{"Bad Header: x", "Bad(Header: x", "Bad@Header: x", "Bad\"Q: x", "B\xe4d: x", "Bad/H: x", "X-Ctl: a\x01b", "X-Del: a\x7fb"} {
		c := dial(t, s.Addr)
		fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: %s\r\n%s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", token, h, len(anthropicBody), anthropicBody)
		c.SetReadDeadline(time.Now().Add(15 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if strings.Contains(string(b), host) {
			t.Errorf("%q: the answer names the upstream: %s", h, b)
		}
		if resp.StatusCode != 200 && resp.StatusCode != 400 {
			t.Errorf("%q: status %d %s: want the request served (header dropped) or refused as the client's fault", h, resp.StatusCode, b)
		}
	}
	noCooldowns(t, s)
}

// Finding: an upstream address reaches the client in the 502.
func TestUpstreamAddressNotShown(t *testing.T) {
	s := start(t, config("", "http://127.0.0.1:1", ""))
	resp, body := do(t, "POST", s.URL+"/v1/messages", anthropicBody, map[string]string{"x-api-key": token})
	if resp.StatusCode < 500 || strings.Contains(body, "127.0.0.1") || strings.Contains(body, "http://") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

// Finding: Gemini bodies are not checked for JSON, "stream": "yes" is
// accepted; a client fault may reach the upstream and cool a channel.
func TestStrictInput(t *testing.T) {
	m, up := startMock(t)
	s := start(t, config("", up, ""))
	anth := map[string]string{"x-api-key": token}
	oai := map[string]string{"Authorization": "Bearer " + token}
	gem := map[string]string{"x-goog-api-key": token}
	cases := []struct {
		name, path, body string
		hdr              map[string]string
		shape            string
	}{
		{"gemini invalid json", "/v1beta/models/gemini-x:generateContent", `{"contents":[`, gem, `"status":"INVALID_ARGUMENT"`},
		{"gemini array", "/v1beta/models/gemini-x:generateContent", `[1,2]`, gem, `"status":"INVALID_ARGUMENT"`},
		{"gemini stream invalid", "/v1beta/models/gemini-x:streamGenerateContent", `{"contents":[}`, gem, `"status":"INVALID_ARGUMENT"`},
		{"anthropic stream string", "/v1/messages", `{"model":"claude-x","stream":"yes","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, anth, `"type":"invalid_request_error"`},
		{"anthropic model number", "/v1/messages", `{"model":7,"max_tokens":8,"messages":[]}`, anth, `"type":"invalid_request_error"`},
		{"chat invalid utf8", "/v1/chat/completions", "{\"model\":\"gpt-x\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}", oai, `"error":{`},
		{"chat include_usage string", "/v1/chat/completions", `{"model":"gpt-x","stream":true,"stream_options":{"include_usage":"yes"},"messages":[{"role":"user","content":"hi"}]}`, oai, `"error":{`},
		{"responses stream number", "/v1/responses", `{"model":"gpt-x","stream":1,"input":"hi"}`, oai, `"error":{`},
		{"model with escape", "/v1/messages", `{"model":"claude-x\u001b[2J","max_tokens":8,"messages":[]}`, anth, `"type":"invalid_request_error"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := do(t, "POST", s.URL+c.path, c.body, c.hdr)
			if resp.StatusCode != 400 || !strings.Contains(body, c.shape) {
				t.Fatalf("got %d %s, want 400 in the client's shape (%s)", resp.StatusCode, body, c.shape)
			}
		})
	}
	if n := len(m.Requests()); n != 0 {
		t.Fatalf("client faults reached the upstream %d times", n)
	}
	noCooldowns(t, s)
}

// Finding: /v1beta/models/../../admin/channels:generateContent is
// normalised into the admin API.
func TestProxyPathsNeverReachAdmin(t *testing.T) {
	_, up := startMock(t)
	s := start(t, config("", up, ""))
	for _, p := range []string{
		"/v1beta/models/../../admin/channels:generateContent",
		"/v1beta/models/%2e%2e/%2e%2e/admin/channels:generateContent",
		"/v1/models/..%2f..%2fadmin%2fchannels:generateContent",
		"/v1/messages/../../admin/login",
	} {
		c := dial(t, s.Addr)
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nx-goog-api-key: %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", p, token)
		c.SetReadDeadline(time.Now().Add(15 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 400 || !strings.Contains(string(b), "dot segments") {
			t.Errorf("%s: %d %s, want the proxy's 400 for dot segments", p, resp.StatusCode, b)
		}
	}
}
