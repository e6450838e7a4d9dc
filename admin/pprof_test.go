package admin_test

import (
	"os"
	"strings"
	"testing"
)

// server.pprof: off by default (404 even with the password), never without
// the password, and the runtime's profiles once a reload turns it on.
func TestPprofOptIn(t *testing.T) {
	e := start(t)
	auth := map[string]string{"Authorization": "Bearer " + adminPass}

	if resp, body := e.call(t, "GET", "/admin/debug/pprof/heap", auth, ""); resp.StatusCode != 404 || !strings.Contains(body, "server.pprof") {
		t.Fatalf("pprof off: got %d %s, want 404 naming server.pprof", resp.StatusCode, body)
	}

	file := e.Src.Status().File
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	on := strings.Replace(string(b), "max_body_bytes: 1MiB}", "max_body_bytes: 1MiB, pprof: true}", 1)
	if on == string(b) {
		t.Fatal("test config changed shape; cannot turn pprof on")
	}
	if err := os.WriteFile(file, []byte(on), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.Src.Reload(); err != nil {
		t.Fatal(err)
	}

	if resp, _ := e.call(t, "GET", "/admin/debug/pprof/heap", nil, ""); resp.StatusCode != 401 {
		t.Fatalf("pprof without password: got %d, want 401", resp.StatusCode)
	}
	if resp, body := e.call(t, "GET", "/admin/debug/pprof/goroutine?debug=1", auth, ""); resp.StatusCode != 200 || !strings.Contains(body, "goroutine profile:") {
		t.Fatalf("goroutine profile: got %d %.200s", resp.StatusCode, body)
	}
	if resp, body := e.call(t, "GET", "/admin/debug/pprof/", auth, ""); resp.StatusCode != 200 || !strings.Contains(body, "heap") {
		t.Fatalf("index: got %d %.200s", resp.StatusCode, body)
	}
	if resp, _ := e.call(t, "GET", "/admin/debug/pprof/profile?seconds=1", auth, ""); resp.StatusCode != 200 {
		t.Fatalf("cpu profile: got %d", resp.StatusCode)
	}
	if resp, _ := e.call(t, "GET", "/admin/debug/pprof/no-such-profile", auth, ""); resp.StatusCode != 404 {
		t.Fatalf("unknown profile: got %d, want 404", resp.StatusCode)
	}
}
