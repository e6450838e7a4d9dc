package admin_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ccload/ccload/admin/adminapi"
)

func TestChannelTest(t *testing.T) {
	e := start(t)
	test := func(name, body string) (int, adminapi.ProbeResult, string) {
		t.Helper()
		resp, b := e.call(t, "POST", "/admin/channels/"+name+"/test", bearer, body)
		var r adminapi.ProbeResult
		if resp.StatusCode == 200 {
			if err := json.Unmarshal([]byte(b), &r); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
		}
		for _, s := range secrets {
			if strings.Contains(b, s) {
				t.Errorf("test of %s: the answer contains the secret %q: %s", name, s, b)
			}
		}
		return resp.StatusCode, r, b
	}

	code, r, b := test("main", "")
	if code != 200 || !r.OK || r.Status != 200 || r.Model != "claude-x" || r.Channel != "main" {
		t.Fatalf("default test of main: %d %s", code, b)
	}
	if !strings.Contains(r.Key, "#") || r.URL == "" || r.Protocol != "anthropic" {
		t.Errorf("key %q (want a key id), url %q, protocol %q", r.Key, r.URL, r.Protocol)
	}
	if code, r, b = test("main", `{"model":"claude-y","key":1}`); code != 200 || !r.OK || r.Upstream != "claude-y-2026" {
		t.Errorf("renamed model: %d %s", code, b)
	}
	// The disabled backup channel goes through a proxy that refuses: the
	// test still runs, fails as a network failure, and shows no secret.
	if code, r, b = test("backup", ""); code != 200 || r.OK || r.Kind != "network" {
		t.Errorf("backup: %d %s", code, b)
	}
	for _, c := range []struct {
		name, body string
		want       int
	}{
		{"nope", "", 404},
		{"main", `{"model":"gpt-9"}`, 400},
		{"main", `{"key":2}`, 400},
		{"main", `{"url":-1}`, 400},
		{"main", `{"bogus":1}`, 400},
	} {
		if code, _, b := test(c.name, c.body); code != c.want {
			t.Errorf("test %s %s: %d %s, want %d", c.name, c.body, code, b, c.want)
		}
	}
	if resp, _ := e.call(t, "GET", "/admin/channels/main/test", bearer, ""); resp.StatusCode != 405 {
		t.Errorf("GET: %d, want 405", resp.StatusCode)
	}
	if resp, _ := e.call(t, "POST", "/admin/channels/main/test", nil, ""); resp.StatusCode != 401 {
		t.Errorf("no session: %d, want 401", resp.StatusCode)
	}
}
