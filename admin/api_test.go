package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/admin"
	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/ccloadtest/wait"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
)

// scenario is one admin API call and what its answer must (not) contain.
type scenario struct {
	name        string
	method, url string
	headers     map[string]string
	body        string
	status      int
	contains    []string
	notContains []string
}

func (sc scenario) run(t *testing.T, e *env) {
	t.Helper()
	resp, body := e.call(t, sc.method, sc.url, sc.headers, sc.body)
	if resp.StatusCode != sc.status {
		t.Fatalf("%s %s: status %d, want %d\n%s", sc.method, sc.url, resp.StatusCode, sc.status, body)
	}
	for _, c := range sc.contains {
		if !strings.Contains(body, c) {
			t.Errorf("%s %s: body lacks %q\n%s", sc.method, sc.url, c, body)
		}
	}
	for _, c := range sc.notContains {
		if strings.Contains(body, c) {
			t.Errorf("%s %s: body contains %q\n%s", sc.method, sc.url, c, body)
		}
	}
}

// Key ids as the engine names them in logs and cooldowns.
var (
	id1 = engine.KeyID(config.Secret(keyMain1))
	id2 = engine.KeyID(config.Secret(keyMain2))
)

// protected lists every endpoint that needs an admin session.
var protected = []struct{ method, url, body string }{
	{"GET", "/admin/status", ""},
	{"GET", "/admin/config", ""},
	{"GET", "/admin/config?format=yaml", ""},
	{"POST", "/admin/config/reload", ""},
	{"GET", "/admin/channels", ""},
	{"POST", "/admin/channels/main/pause", ""},
	{"POST", "/admin/channels/main/resume", ""},
	{"POST", "/admin/channels/main/test", `{}`},
	{"GET", "/admin/cooldowns", ""},
	{"POST", "/admin/cooldowns/clear", `{"all":true}`},
	{"GET", "/admin/tokens", ""},
	{"GET", "/admin/accounts", ""},
	{"GET", "/admin/logs", ""},
	{"GET", "/admin/stats", ""},
	{"GET", "/admin/active", ""},
	{"GET", "/admin/events", ""},
}

func TestAuthRequiredEverywhere(t *testing.T) {
	e := start(t)
	for _, p := range protected {
		t.Run(p.method+" "+p.url, func(t *testing.T) {
			scenario{method: p.method, url: p.url, body: p.body, status: 401,
				contains: []string{`{"error":"admin login required`}}.run(t, e)
			scenario{method: p.method, url: p.url, body: p.body, status: 401,
				headers:  map[string]string{"Authorization": "Bearer not-the-password"},
				contains: []string{`{"error":"wrong admin password"}`}}.run(t, e)
			scenario{method: p.method, url: p.url, body: p.body, status: 401,
				headers:  map[string]string{"Cookie": "ccload_session=0123456789abcdef"},
				contains: []string{`"error"`}}.run(t, e)
			// A wrong password counts against the address: move past the
			// rate-limit window so the next endpoint starts afresh.
			e.Clock.Advance(time.Minute)
		})
	}
	// The same endpoints answer with the password as a Bearer token (the
	// events stream is checked in events_test.go).
	for _, p := range protected {
		if p.url == "/admin/events" {
			continue
		}
		scenario{method: p.method, url: p.url, body: p.body, headers: bearer, status: 200}.run(t, e)
	}
}

func TestEndpointShapes(t *testing.T) {
	e := start(t)
	if st, body := e.proxy(t, "claude-x", false, ""); st != 200 {
		t.Fatalf("proxy: %d %s", st, body)
	}
	if st, body := e.proxy(t, "claude-y", true, ""); st != 200 {
		t.Fatalf("proxy stream: %d %s", st, body)
	}
	e.waitRows(t, 2)

	for _, sc := range []scenario{
		{name: "status", method: "GET", url: "/admin/status", status: 200, contains: []string{
			`"started_at":"2026-03-04T05:06:07Z"`, `"config":{"file":"`, `"error":""`, `"channels":2,"tokens":2`,
			`"storage":{"driver":"sqlite"`, `"in_flight":0`, `"events_dropped":0`}},
		{name: "config", method: "GET", url: "/admin/config", status: 200, contains: []string{
			`"admin_password":"(set)"`, `"dsn":"`, `"keys":["` + id1 + `","` + id2 + `"]`,
			`"name":"X-Relay-Auth","value":"rewr…0003"`, `"path":"max_tokens","value":64`,
			`"proxy":"http://user:prox…0005@127.0.0.1:9"`, `?key=url-…0007`,
			`"history":[{"time":"`, `"result":"loaded"`}},
		{name: "config yaml", method: "GET", url: "/admin/config?format=yaml", status: 200, contains: []string{
			"admin_password: (set)", "- name: main", "upstream: claude-y-2026"}},
		{name: "config bad format", method: "GET", url: "/admin/config?format=xml", status: 400,
			contains: []string{`{"error":"format: want`}},
		{name: "channels", method: "GET", url: "/admin/channels", status: 200, contains: []string{
			`"name":"main","enabled":true,"priority":10,"weight":2`, `"protocols":["anthropic"]`,
			`"models":[{"name":"claude-x","upstream":"claude-x","disabled":false},{"name":"claude-y","upstream":"claude-y-2026","disabled":false}]`,
			`"limits":{"rpm_limit":100,`, `"state":"ok","paused":false,"paused_at":null,"in_flight":0,"rpm":2`,
			`"visited":true`, `"cooldowns":[]`, `"today":{"requests":2,"errors":0,`,
			`"name":"backup","enabled":false`, `"state":"disabled"`}},
		{name: "tokens", method: "GET", url: "/admin/tokens", status: 200, contains: []string{
			`"name":"alice"`, `"models":[]`, `"expires":null`, `"cost_used":0`, `"rpm":2`, `"today":{"requests":2,`,
			`"name":"bob"`, `"models":["claude-*"]`, `"cost_limit":10`, `"rpm_limit":60`, `"expires":"2030-01-01T`, `"expired":false`}},
		{name: "logs", method: "GET", url: "/admin/logs?status=2xx&channel=main&limit=1", status: 200, contains: []string{
			`"rows":[{"id":2,`, `"token":"alice"`, `"model":"claude-y"`, `"upstream_model":"claude-y-2026"`, `"key":"` + id1 + `"`,
			`"attempt_log":[{"channel":"main","key":"` + id1 + `"`, `"stream":true`, `"next_before":2`}},
		{name: "logs page 2", method: "GET", url: "/admin/logs?before=2", status: 200, contains: []string{
			`"rows":[{"id":1,`, `"model":"claude-x"`, `"next_before":0`}},
		{name: "logs since", method: "GET", url: "/admin/logs?since=1h&until=2026-03-04T06:00:00Z", status: 200,
			contains: []string{`"id":2`, `"id":1`}},
		{name: "logs 5xx", method: "GET", url: "/admin/logs?status=5xx", status: 200, contains: []string{`{"rows":[],"next_before":0}`}},
		{name: "logs bad status", method: "GET", url: "/admin/logs?status=9xx", status: 400, contains: []string{`"error":"status: want 1xx, 2xx`}},
		{name: "logs bad since", method: "GET", url: "/admin/logs?since=yesterday", status: 400, contains: []string{`"error":"since: want`}},
		{name: "logs bad limit", method: "GET", url: "/admin/logs?limit=-1", status: 400},
		{name: "stats", method: "GET", url: "/admin/stats?range=1h&bucket=1m", status: 200, contains: []string{
			`"bucket_seconds":60`, `"since":"2026-03-04T04:06:00Z"`, `"until":"2026-03-04T05:07:00Z"`,
			`{"start":"2026-03-04T05:06:00Z","requests":2,"errors":0`,
			`"top":{"models":[{"name":"claude-x","requests":1`, `"channels":[{"name":"main","requests":2`,
			`"tokens":[{"name":"alice","requests":2`}},
		{name: "stats bad bucket", method: "GET", url: "/admin/stats?bucket=7m", status: 400, contains: []string{`"error":"bucket:`}},
		{name: "stats bad range", method: "GET", url: "/admin/stats?range=90d", status: 400},
		{name: "stats too many buckets", method: "GET", url: "/admin/stats?range=7d&bucket=1m", status: 400},
		{name: "active", method: "GET", url: "/admin/active", status: 200, contains: []string{`"active":[]`}},
		{name: "cooldowns", method: "GET", url: "/admin/cooldowns", status: 200, contains: []string{`"cooldowns":[]`}},
		{name: "clear needs channel", method: "POST", url: "/admin/cooldowns/clear", body: `{}`, status: 400},
		{name: "clear bad scope", method: "POST", url: "/admin/cooldowns/clear", body: `{"channel":"main","scope":"planet"}`, status: 400},
		{name: "clear unknown field", method: "POST", url: "/admin/cooldowns/clear", body: `{"chanel":"main"}`, status: 400},
		{name: "clear nothing", method: "POST", url: "/admin/cooldowns/clear", body: `{"channel":"main"}`, status: 200,
			contains: []string{`{"cleared":[]}`}},
		{name: "pause unknown channel", method: "POST", url: "/admin/channels/nope/pause", status: 404,
			contains: []string{`{"error":"no channel named \"nope\""}`}},
		{name: "pause needs POST", method: "GET", url: "/admin/channels/main/pause", status: 405},
		{name: "reload unchanged", method: "POST", url: "/admin/config/reload", status: 200, contains: []string{`"reloads":0`}},
		{name: "unknown endpoint", method: "GET", url: "/admin/nope", status: 404, contains: []string{`{"error":"no admin endpoint /admin/nope"}`}},
		{name: "metrics without auth", method: "GET", url: "/metrics", status: 401, contains: []string{"metrics_token"}},
		{name: "metrics with the admin password", method: "GET", url: "/metrics", headers: bearer, status: 200, contains: []string{"ccload_requests_total"}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			if sc.headers == nil && sc.url != "/metrics" {
				sc.headers = bearer
			}
			sc.notContains = append(sc.notContains, secrets...)
			sc.run(t, e)
		})
	}
}

func TestLoginLogoutCookie(t *testing.T) {
	e := start(t)
	scenario{method: "POST", url: "/admin/login", body: `{"password":"nope"}`, status: 401,
		contains: []string{`{"error":"wrong admin password"}`}}.run(t, e)

	resp, body := e.call(t, "POST", "/admin/login", nil, `{"password":"`+adminPass+`"}`)
	if resp.StatusCode != 200 || !strings.Contains(body, `"ok":true,"expires_at":"2026-03-04T17:06:07Z"`) {
		t.Fatalf("login: %d %s", resp.StatusCode, body)
	}
	set := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"ccload_session=", "HttpOnly", "SameSite=Strict", "Path=/", "max-age=43200"} {
		if !strings.Contains(strings.ToLower(set), strings.ToLower(want)) {
			t.Errorf("Set-Cookie %q lacks %s", set, want)
		}
	}
	if strings.Contains(strings.ToLower(set), "secure") {
		t.Errorf("Set-Cookie %q: Secure on plain HTTP would stop the browser sending it", set)
	}
	cookie := strings.SplitN(set, ";", 2)[0]
	id := strings.TrimPrefix(cookie, "ccload_session=")
	if len(id) != 64 {
		t.Errorf("session id %q: want 32 random bytes in hex", id)
	}
	withCookie := map[string]string{"Cookie": cookie}
	scenario{method: "GET", url: "/admin/status", headers: withCookie, status: 200}.run(t, e)

	// A second login gets a different session.
	resp2, _ := e.call(t, "POST", "/admin/login", nil, `{"password":"`+adminPass+`"}`)
	if other := strings.SplitN(resp2.Header.Get("Set-Cookie"), ";", 2)[0]; other == cookie {
		t.Error("two logins got the same session id")
	}

	resp, _ = e.call(t, "POST", "/admin/logout", withCookie, "")
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Set-Cookie"), "ccload_session=;") {
		t.Fatalf("logout: %d %q", resp.StatusCode, resp.Header.Get("Set-Cookie"))
	}
	scenario{method: "GET", url: "/admin/status", headers: withCookie, status: 401}.run(t, e)

	// Sessions expire.
	resp, _ = e.call(t, "POST", "/admin/login", nil, `{"password":"`+adminPass+`"}`)
	withCookie = map[string]string{"Cookie": strings.SplitN(resp.Header.Get("Set-Cookie"), ";", 2)[0]}
	e.Clock.Advance(12*time.Hour - time.Second)
	scenario{method: "GET", url: "/admin/status", headers: withCookie, status: 200}.run(t, e)
	e.Clock.Advance(time.Second)
	scenario{method: "GET", url: "/admin/status", headers: withCookie, status: 401}.run(t, e)
}

func TestLoginRateLimit(t *testing.T) {
	e := start(t)
	for i := range 5 {
		if i == 4 {
			// Bearer guesses count too, or they would be a way around the limit.
			scenario{method: "GET", url: "/admin/status", status: 401,
				headers: map[string]string{"Authorization": "Bearer guess"}}.run(t, e)
			continue
		}
		scenario{method: "POST", url: "/admin/login", body: `{"password":"guess"}`, status: 401}.run(t, e)
	}
	// Even the right password is refused now, by either route.
	resp, body := e.call(t, "POST", "/admin/login", nil, `{"password":"`+adminPass+`"}`)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "60" || !strings.Contains(body, "too many wrong admin passwords") {
		t.Fatalf("6th login: %d retry-after %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	scenario{method: "GET", url: "/admin/status", headers: bearer, status: 429}.run(t, e)
	e.Clock.Advance(30 * time.Second)
	resp, _ = e.call(t, "POST", "/admin/login", nil, `{"password":"`+adminPass+`"}`)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "30" {
		t.Fatalf("after 30 s: %d retry-after %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	e.Clock.Advance(30 * time.Second)
	scenario{method: "POST", url: "/admin/login", body: `{"password":"` + adminPass + `"}`, status: 200}.run(t, e)
	// The success reset the count: four more guesses are allowed.
	for range 4 {
		scenario{method: "POST", url: "/admin/login", body: `{"password":"guess"}`, status: 401}.run(t, e)
	}
	scenario{method: "GET", url: "/admin/status", headers: bearer, status: 200}.run(t, e)
}

func TestPauseResumePersisted(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	scenario{method: "POST", url: "/admin/channels/main/pause", headers: bearer, status: 200, contains: []string{
		`"name":"main"`, `"state":"paused","paused":true,"paused_at":"2026-03-04T05:06:07Z"`}}.run(t, e)
	ovs, err := e.Store.ListOverrides(ctx)
	if err != nil || len(ovs) != 1 || ovs[0].Kind != admin.OverridePause || ovs[0].Target != "main" {
		t.Fatalf("overrides after pause: %+v %v", ovs, err)
	}
	if !e.Engine.Paused("main") {
		t.Fatal("engine not paused")
	}
	before := len(e.Mock.Requests())
	if st, _ := e.proxy(t, "claude-x", false, ""); st == 200 {
		t.Fatal("request served by a paused channel")
	}
	if n := len(e.Mock.Requests()); n != before {
		t.Fatalf("paused channel got %d upstream requests", n-before)
	}
	scenario{method: "GET", url: "/admin/channels", headers: bearer, status: 200,
		contains: []string{`"state":"paused","paused":true`}}.run(t, e)

	// A restart re-applies the stored pause.
	fresh := &pausedSet{}
	if n, err := admin.RestorePauses(ctx, e.Store, fresh); err != nil || n != 1 || !fresh.m["main"] {
		t.Fatalf("RestorePauses: %d %v %v", n, err, fresh.m)
	}

	scenario{method: "POST", url: "/admin/channels/main/resume", headers: bearer, status: 200, contains: []string{
		`"state":"ok","paused":false,"paused_at":null`}}.run(t, e)
	if ovs, _ := e.Store.ListOverrides(ctx); len(ovs) != 0 {
		t.Fatalf("overrides after resume: %+v", ovs)
	}
	if st, body := e.proxy(t, "claude-x", false, ""); st != 200 {
		t.Fatalf("after resume: %d %s", st, body)
	}
}

type pausedSet struct{ m map[string]bool }

func (p *pausedSet) SetPaused(name string, paused bool) {
	if p.m == nil {
		p.m = map[string]bool{}
	}
	p.m[name] = paused
}

func TestCooldownClear(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	// Both keys answer 401: each cools (key scope), then the channel.
	if st, _ := e.proxy(t, "claude-x", false, "fail-401"); st == 200 {
		t.Fatal("fail-401 scenario succeeded")
	}
	scenario{method: "GET", url: "/admin/cooldowns", headers: bearer, status: 200, contains: []string{
		`{"scope":"channel","channel":"main","until":"2026-03-04T05:11:07Z","seconds_left":300,"strikes":1,"kind":"auth"`,
		`{"scope":"key","channel":"main","key":"` + id1 + `","until":"2026-03-04T05:11:07Z","seconds_left":300,"strikes":1,"kind":"auth"`,
		`"key":"` + id2 + `"`}, notContains: secrets}.run(t, e)
	scenario{method: "GET", url: "/admin/channels", headers: bearer, status: 200, contains: []string{
		`"state":"cooling"`, `"scope":"key","channel":"main","key":"` + id1 + `"`}}.run(t, e)
	e.Clock.Advance(100 * time.Second)
	scenario{method: "GET", url: "/admin/cooldowns", headers: bearer, status: 200,
		contains: []string{`"seconds_left":200`}}.run(t, e)

	// Clear one key by its id, the other by its fingerprint alone, then
	// the rest of the channel.
	scenario{method: "POST", url: "/admin/cooldowns/clear", headers: bearer, status: 200,
		body:     `{"channel":"main","scope":"key","key":"` + id2 + `"}`,
		contains: []string{`"cleared":[{"scope":"key","channel":"main","key":"` + id2 + `"`}, notContains: []string{id1}}.run(t, e)
	scenario{method: "GET", url: "/admin/cooldowns", headers: bearer, status: 200,
		contains: []string{`"key":"` + id1 + `"`}, notContains: []string{id2}}.run(t, e)
	scenario{method: "POST", url: "/admin/cooldowns/clear", headers: bearer, status: 200,
		body: `{"channel":"main","key":"sk-u…0001"}`, contains: []string{`"key":"` + id1 + `"`}}.run(t, e)
	scenario{method: "POST", url: "/admin/cooldowns/clear", headers: bearer, status: 200,
		body: `{"channel":"main"}`, contains: []string{`"cleared":[{"scope":"channel"`}}.run(t, e)
	scenario{method: "GET", url: "/admin/cooldowns", headers: bearer, status: 200,
		contains: []string{`"cooldowns":[]`}}.run(t, e)

	// The clears reached the database too (the registry persists in the
	// background).
	wait.Eventually(t, 5*time.Second, "no cooldown stored", func() bool {
		left, err := e.Store.ListCooldowns(ctx, e.Clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		return len(left) == 0
	})
	if st, body := e.proxy(t, "claude-x", false, ""); st != 200 {
		t.Fatalf("after clear: %d %s", st, body)
	}
}

// TestNoSecretsInAnyResponse drives traffic of every outcome, then reads
// every endpoint (and the events stream) and checks that no configured key,
// client token, password or credential-bearing URL part appears, in full
// or in its middle.
func TestNoSecretsInAnyResponse(t *testing.T) {
	e := start(t)
	c := adminapi.NewClient(e.URL, adminPass, nil)
	stream, err := c.Events(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()

	e.proxy(t, "claude-x", true, "")
	e.proxy(t, "claude-x", false, "fail-401") // key and channel cooldowns
	e.Engine.Cooldowns().List()
	e.call(t, "POST", "/admin/cooldowns/clear", bearer, `{"all":true}`)
	e.proxy(t, "claude-y", false, "fail-500")
	e.proxy(t, "unknown-model", false, "")
	e.call(t, "POST", "/v1/messages", map[string]string{"x-api-key": bobToken, "anthropic-version": "2023-06-01"},
		`{"model":"claude-x","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`)
	e.call(t, "POST", "/v1/messages", map[string]string{"x-api-key": "sk-wrong"}, `{}`)
	e.waitRows(t, 5)

	var bodies []string
	for _, p := range protected {
		if p.url == "/admin/events" {
			continue
		}
		_, b := e.call(t, p.method, p.url, bearer, p.body)
		bodies = append(bodies, p.url+": "+b)
	}
	for _, u := range []string{"/metrics", "/admin/logs?limit=1000", "/admin/stats?range=1d&bucket=1h"} {
		_, b := e.call(t, "GET", u, bearer, "")
		bodies = append(bodies, u+": "+b)
	}
	// Error answers too.
	_, b := e.call(t, "POST", "/admin/login", nil, `{"password":"`+adminPass+`x"}`)
	bodies = append(bodies, "bad login: "+b)
	_, b = e.call(t, "GET", "/admin/status", map[string]string{"Authorization": "Bearer " + keyMain1}, "")
	bodies = append(bodies, "bearer key: "+b)

	evs, _ := json.Marshal(drain(stream, 200*time.Millisecond))
	bodies = append(bodies, "events: "+string(evs))

	for _, body := range bodies {
		for _, s := range secrets {
			middle := s[4 : len(s)-4]
			if strings.Contains(body, s) || strings.Contains(body, middle) {
				t.Errorf("secret %q leaked in %s", s, body)
			}
		}
	}
}

// drain collects the events that arrive within d.
func drain(s *adminapi.EventStream, d time.Duration) []adminapi.Event {
	var out []adminapi.Event
	timeout := time.After(d)
	for {
		select {
		case ev, ok := <-s.C:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			return out
		}
	}
}

func TestClientErrors(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	_, err := adminapi.NewClient(e.URL, "wrong", nil).Status(ctx)
	var ae *adminapi.APIError
	if !errors.As(err, &ae) || ae.Status != 401 || !strings.Contains(err.Error(), "CCLOAD_PASS") {
		t.Fatalf("wrong password: %v", err)
	}
	// A port where nothing listens.
	_, err = adminapi.NewClient("http://127.0.0.1:1", adminPass, nil).Status(ctx)
	var nr *adminapi.NotRunningError
	if !errors.As(err, &nr) || !strings.HasPrefix(err.Error(), "ccload is not running at http://127.0.0.1:1") {
		t.Fatalf("not running: %v", err)
	}
	logs, err := adminapi.NewClient(e.URL, adminPass, &http.Client{}).Logs(ctx, adminapi.LogFilter{Status: "2xx", Since: "1h"})
	if err != nil || logs.Rows == nil {
		t.Fatalf("logs: %+v %v", logs, err)
	}
}
