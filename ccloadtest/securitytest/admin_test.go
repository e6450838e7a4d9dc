package securitytest

import (
	"net/http"
	"os"
	"strings"
	"testing"
)

// login opens an admin session and returns its cookie ("name=value").
func login(t *testing.T, s *server, hdr map[string]string) (string, *http.Response) {
	t.Helper()
	resp, body := do(t, "POST", s.URL+"/admin/login", `{"password":"`+adminPassword+`"}`, hdr)
	if resp.StatusCode != 200 {
		t.Fatalf("login: %d %s", resp.StatusCode, body)
	}
	return strings.SplitN(resp.Header.Get("Set-Cookie"), ";", 2)[0], resp
}

// Finding: state-changing admin POSTs accept text/plain from any Origin
// when a session cookie is present (SameSite=Strict is the only guard).
func TestAdminCookiePostsNeedJSONAndSameOrigin(t *testing.T) {
	s := start(t, config("", "http://127.0.0.1:9", ""))
	cookie, _ := login(t, s, nil)
	self := s.URL
	cases := []struct {
		name   string
		hdr    map[string]string
		body   string
		status int
	}{
		{"form from evil origin", map[string]string{"Cookie": cookie, "Content-Type": "text/plain", "Origin": "https://evil.example"}, "x", 415},
		{"json from evil origin", map[string]string{"Cookie": cookie, "Content-Type": "application/json", "Origin": "https://evil.example"}, "{}", 403},
		{"json cross-site fetch", map[string]string{"Cookie": cookie, "Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, "{}", 403},
		{"json without origin", map[string]string{"Cookie": cookie, "Content-Type": "application/json"}, "{}", 403},
		{"json same origin", map[string]string{"Cookie": cookie, "Content-Type": "application/json", "Origin": self}, "{}", 200},
		{"json same-origin fetch", map[string]string{"Cookie": cookie, "Content-Type": "application/json", "Sec-Fetch-Site": "same-origin"}, "{}", 200},
		{"bearer (CLI)", map[string]string{"Authorization": "Bearer " + adminPassword}, "", 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := do(t, "POST", s.URL+"/admin/config/reload", c.body, c.hdr)
			if resp.StatusCode != c.status {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, c.status)
			}
		})
	}
}

// Finding: sessions survive an admin_password change.
func TestSessionsEndWhenPasswordChanges(t *testing.T) {
	s := start(t, config("", "http://127.0.0.1:9", ""))
	cookie, _ := login(t, s, nil)
	if resp, body := do(t, "GET", s.URL+"/admin/status", "", map[string]string{"Cookie": cookie}); resp.StatusCode != 200 {
		t.Fatalf("session: %d %s", resp.StatusCode, body)
	}
	b, _ := os.ReadFile(s.File)
	if err := os.WriteFile(s.File, []byte(strings.Replace(string(b), adminPassword, "a-new-admin-password-2", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if resp, body := do(t, "POST", s.URL+"/admin/config/reload", "", map[string]string{"Authorization": "Bearer " + adminPassword}); resp.StatusCode != 200 {
		t.Fatalf("reload: %d %s", resp.StatusCode, body)
	}
	if resp, body := do(t, "GET", s.URL+"/admin/status", "", map[string]string{"Cookie": cookie}); resp.StatusCode != 401 {
		t.Fatalf("old session after a password change: %d %s, want 401", resp.StatusCode, body)
	}
}

// Finding: behind a proxy every client shares one IP (login limiter, logs)
// and the cookie is never Secure behind a TLS-terminating proxy.
func TestTrustedProxies(t *testing.T) {
	_, up := startMock(t)
	s := start(t, config(`  trusted_proxies: ["127.0.0.0/8"]`, up, ""))
	_, resp := login(t, s, map[string]string{"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"})
	if set := resp.Header.Get("Set-Cookie"); !strings.Contains(strings.ToLower(set), "secure") {
		t.Errorf("cookie behind a TLS proxy is not Secure: %s", set)
	}
	if r, body := do(t, "POST", s.URL+"/v1/messages", anthropicBody, map[string]string{"x-api-key": token, "X-Forwarded-For": "198.51.100.7, 127.0.0.2"}); r.StatusCode != 200 {
		t.Fatalf("proxy: %d %s", r.StatusCode, body)
	}
	if rows := s.logs(t, 1); rows[0].ClientIP != "198.51.100.7" {
		t.Errorf("row client ip %q, want the address the proxy saw", rows[0].ClientIP)
	}
	// The login limiter counts per forwarded client: one client's wrong
	// passwords do not lock out another behind the same proxy.
	for range 6 {
		do(t, "POST", s.URL+"/admin/login", `{"password":"wrong"}`, map[string]string{"X-Forwarded-For": "192.0.2.66"})
	}
	if r, _ := do(t, "POST", s.URL+"/admin/login", `{"password":"wrong"}`, map[string]string{"X-Forwarded-For": "192.0.2.66"}); r.StatusCode != 429 {
		t.Errorf("guessing client not limited: %d", r.StatusCode)
	}
	login(t, s, map[string]string{"X-Forwarded-For": "192.0.2.77"})
}

// Without trusted_proxies, X-Forwarded-For is the client's word and ignored.
func TestForwardedForIgnoredByDefault(t *testing.T) {
	_, up := startMock(t)
	s := start(t, config("", up, ""))
	if r, body := do(t, "POST", s.URL+"/v1/messages", anthropicBody, map[string]string{"x-api-key": token, "X-Forwarded-For": "198.51.100.7"}); r.StatusCode != 200 {
		t.Fatalf("proxy: %d %s", r.StatusCode, body)
	}
	if rows := s.logs(t, 1); rows[0].ClientIP != "127.0.0.1" {
		t.Errorf("row client ip %q: a client's X-Forwarded-For was believed", rows[0].ClientIP)
	}
	_, resp := login(t, s, map[string]string{"X-Forwarded-Proto": "https"})
	if set := resp.Header.Get("Set-Cookie"); strings.Contains(strings.ToLower(set), "secure") {
		t.Errorf("Secure cookie on plain HTTP from an untrusted X-Forwarded-Proto: %s", set)
	}
}

// Findings: serve accepts the public demo token; the SQLite file is 0644.
func TestDemoTokenRefusedAndDatabasePrivate(t *testing.T) {
	s := start(t, config("", "http://127.0.0.1:9", ""))
	st, err := os.Stat(s.DB)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		t.Errorf("database file mode %v, want owner only", st.Mode().Perm())
	}
	demo := config("", "http://127.0.0.1:9", "  - {name: demo, token: sk-ccload-demo}\n")
	if err := serveOnce(t, demo); err == nil || !strings.Contains(err.Error(), "demo token") {
		t.Fatalf("serve with the demo token: %v, want a refusal", err)
	}
}
