package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/ccloadtest/wait"
	"github.com/ccload/ccload/engine"
)

// Every provider is https: these tests run the request path of the other
// engine tests against a mock upstream on TLS, trusted through
// Options.UpstreamRoots as a provider's certificate is through the
// system's roots.

// startTLSMock starts a mock upstream on TLS and returns it with its base
// URL and the pool that trusts it.
func startTLSMock(t *testing.T, opts mockupstream.Options) (*mockupstream.Server, string, engine.Options) {
	t.Helper()
	m := mockupstream.New(opts)
	u, roots, err := m.StartTLS("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, u, engine.Options{UpstreamRoots: roots}
}

func TestTLSUpstreamNativeAndConverted(t *testing.T) {
	m, u, opts := startTLSMock(t, mockupstream.Options{})
	g := startGatewayWith(t, strings.ReplaceAll(nativeConfig, "{{MOCK}}", u), opts)
	hdr := map[string]string{"Authorization": "Bearer " + testToken}
	cases := []struct{ name, path, body, want string }{
		{"anthropic", "/v1/messages", `{"model":"claude-client","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, mockText},
		{"anthropic stream", "/v1/messages", `{"model":"claude-client","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "message_stop"},
		{"chat to anthropic", "/v1/chat/completions", `{"model":"claude-client","messages":[{"role":"user","content":"hi"}]}`, mockText},
		{"chat stream to anthropic", "/v1/chat/completions", `{"model":"claude-client","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "[DONE]"},
	}
	for i, c := range cases {
		resp, body := post(t, g.URL+c.path, c.body, hdr)
		if resp.StatusCode != 200 || !strings.Contains(body, c.want) {
			t.Fatalf("%s: status %d, want %q in\n%s", c.name, resp.StatusCode, c.want, body)
		}
		checkUpstreamSaw(t, m, "key-anthropic-0001", "claude-upstream")
		rows := g.waitLogs(t, i+1)
		if r := rows[0]; r.Status != 200 || r.Error != "" || r.Incomplete || r.Attempts != 1 {
			t.Fatalf("%s: row %+v", c.name, r)
		}
	}
	if n := len(g.Engine.Cooldowns().List()); n != 0 {
		t.Fatalf("%d cooldowns after answered requests", n)
	}
}

// An upstream whose certificate is not trusted is the URL's failure: the
// request moves on to the next URL, the key stays usable, and the
// untrusted server never sees a request.
func TestTLSUntrustedCertificateFailsOverToNextURL(t *testing.T) {
	bad, badURL, _ := startTLSMock(t, mockupstream.Options{})
	good, goodURL, opts := startTLSMock(t, mockupstream.Options{})
	cfg := strings.NewReplacer(
		"{{URLA}}", `{url: "`+badURL+`", protocols: [anthropic]}, {url: "`+goodURL+`", protocols: [anthropic]}`,
		"{{URLB}}", goodURL, "{{FALLBACK}}", "false").Replace(failoverConfig)
	g := startGatewayWith(t, cfg, opts)
	resp, body := post(t, g.URL+"/v1/messages", `{"model":"m1","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"x-api-key": testToken})
	if resp.StatusCode != 200 || !strings.Contains(body, mockText) {
		t.Fatalf("status %d body %s", resp.StatusCode, body)
	}
	if n := len(bad.Requests()); n != 0 {
		t.Fatalf("the untrusted upstream saw %d requests", n)
	}
	if n := len(good.Requests()); n != 1 {
		t.Fatalf("the trusted upstream saw %d requests, want 1", n)
	}
	row := g.waitLogs(t, 1)[0]
	if row.Attempts != 2 || !strings.Contains(row.AttemptsJSON, `"scope":"url"`) {
		t.Fatalf("attempts %d: %s; want the first one failed on its URL", row.Attempts, row.AttemptsJSON)
	}
	for _, e := range g.Engine.Cooldowns().List() {
		if e.Key.Scope != "url" {
			t.Fatalf("cooldown %+v: a certificate is the URL's fault, not the key's or the channel's", e.Key)
		}
	}
}

// An upstream closing an idle keep-alive connection, with or without a
// 408 written first (Google's front ends do that), costs the next request
// nothing: a new connection carries it, and nothing cools.
func TestTLSIdleConnectionClosedByUpstream(t *testing.T) {
	for _, last := range []string{"", "HTTP/1.1 408 Request Time-out\r\nConnection: close\r\n\r\n"} {
		m, u, opts := startTLSMock(t, mockupstream.Options{})
		g := startGatewayWith(t, strings.ReplaceAll(nativeConfig, "{{MOCK}}", u), opts)
		body := `{"model":"claude-client","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`
		hdr := map[string]string{"x-api-key": testToken}
		for i := range 3 {
			resp, got := post(t, g.URL+"/v1/messages", body, hdr)
			if resp.StatusCode != 200 || !strings.Contains(got, mockText) {
				t.Fatalf("last %q, request %d: status %d body %s", last, i, resp.StatusCode, got)
			}
			if i == 2 {
				break
			}
			var b []byte
			if last != "" {
				b = []byte(last)
			}
			wait.Eventually(t, 5*time.Second, "the upstream closing the idle connection", func() bool { return m.CloseIdle(b) > 0 })
		}
		if n := m.Connections(); n != 3 {
			t.Fatalf("last %q: the upstream accepted %d connections, want 3 (one per request)", last, n)
		}
		for _, r := range g.waitLogs(t, 3) {
			if r.Status != 200 || r.Attempts != 1 {
				t.Fatalf("last %q: row %+v", last, r)
			}
		}
		if n := len(g.Engine.Cooldowns().List()); n != 0 {
			t.Fatalf("last %q: %d cooldowns", last, n)
		}
	}
}

// An upstream that hangs up in the middle of a stream over TLS: the client
// gets the stream's error event and the row says the answer is incomplete;
// content already sent is never retried.
func TestTLSUpstreamHangsUpMidStream(t *testing.T) {
	m, u, opts := startTLSMock(t, mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		rep := mockupstream.DefaultReply(r)
		rep.CutAfterEvents = 5
		return rep
	}})
	g := startGatewayWith(t, strings.ReplaceAll(nativeConfig, "{{MOCK}}", u), opts)
	resp, body := post(t, g.URL+"/v1/messages", `{"model":"claude-client","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"x-api-key": testToken})
	if resp.StatusCode != 200 || !strings.Contains(body, "text_delta") {
		t.Fatalf("status %d body %s", resp.StatusCode, body)
	}
	if !strings.Contains(body, "event: error") || strings.Contains(body, "message_stop") {
		t.Fatalf("the stream should end with an error event:\n%s", body)
	}
	if n := len(m.Requests()); n != 1 {
		t.Fatalf("upstream called %d times after content was sent", n)
	}
	if r := g.waitLogs(t, 1)[0]; !r.Incomplete || r.Error == "" {
		t.Fatalf("row %+v", r)
	}
}

// Streamed answers over TLS leave their connection reusable: once a
// stream's last event and the body's end have come, the next request goes
// out on the same connection, not on a fresh TLS handshake.
func TestTLSStreamedAnswersReuseTheConnection(t *testing.T) {
	m, u, opts := startTLSMock(t, mockupstream.Options{})
	g := startGatewayWith(t, strings.ReplaceAll(nativeConfig, "{{MOCK}}", u), opts)
	hdr := map[string]string{"x-api-key": testToken}
	body := `{"model":"claude-client","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	for i := range 4 {
		resp, got := post(t, g.URL+"/v1/messages", body, hdr)
		if resp.StatusCode != 200 || !strings.Contains(got, "message_stop") {
			t.Fatalf("request %d: status %d body %s", i, resp.StatusCode, got)
		}
	}
	if n := m.Connections(); n != 1 {
		t.Fatalf("the upstream accepted %d connections for 4 streams in sequence, want 1", n)
	}
}
