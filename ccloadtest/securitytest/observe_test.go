package securitytest

import (
	"strings"
	"testing"
)

const metricsToken = "metrics-scrape-token-Security-1"

// Finding: /metrics listed every client token's name and spend to anyone,
// and /health showed the config file's full path (and a failed reload's
// error text). /metrics now needs server.metrics_token or the admin
// password (or a session) and answers 401 otherwise; /health answers
// anyone with its status and counts, and the details only to those.
func TestMetricsAndHealthDetailsNeedCredentials(t *testing.T) {
	_, up := startMock(t)
	s := start(t, config("  metrics_token: "+metricsToken, up, ""))
	if resp, body := do(t, "POST", s.URL+"/v1/messages", anthropicBody, map[string]string{"x-api-key": token}); resp.StatusCode != 200 {
		t.Fatalf("request: %d %s", resp.StatusCode, body)
	}
	for _, auth := range []string{"", "Bearer wrong-token", "Bearer " + token} {
		hdr := map[string]string{}
		if auth != "" {
			hdr["Authorization"] = auth
		}
		resp, body := do(t, "GET", s.URL+"/metrics", "", hdr)
		if resp.StatusCode != 401 || strings.Contains(body, `token="t"`) {
			t.Errorf("/metrics with %q: got %d, want 401 and no series\n%.300s", auth, resp.StatusCode, body)
		}
		resp, body = do(t, "GET", s.URL+"/health", "", hdr)
		if resp.StatusCode != 200 || !strings.Contains(body, `"status":"ok"`) || strings.Contains(body, s.Dir) || strings.Contains(body, "ccload.yaml") {
			t.Errorf("/health with %q: got %d %s, want the status without the config's path", auth, resp.StatusCode, body)
		}
	}
	for _, auth := range []string{"Bearer " + metricsToken, "Bearer " + adminPassword} {
		hdr := map[string]string{"Authorization": auth}
		resp, body := do(t, "GET", s.URL+"/metrics", "", hdr)
		if resp.StatusCode != 200 || !strings.Contains(body, `token="t"`) {
			t.Errorf("/metrics with credentials: got %d, want the series\n%.300s", resp.StatusCode, body)
		}
		resp, body = do(t, "GET", s.URL+"/health", "", hdr)
		if resp.StatusCode != 200 || !strings.Contains(body, s.File) {
			t.Errorf("/health with credentials: got %d %s, want the config file", resp.StatusCode, body)
		}
	}
}
