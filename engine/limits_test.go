package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/ccloadtest/wait"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/failure"
)

// limitsConfig: channel a (priority 10) with {{A_EXTRA}} settings and
// channel b (priority 5); the token gets {{TOKEN_EXTRA}}.
const limitsConfig = `version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: "{{DB}}"}
channels:
  - name: a
    priority: 10
    urls: [{url: "{{MOCK}}", protocols: [anthropic]}]
    keys: [key-a1-000000]
    models: [m1, m2]
{{A_EXTRA}}
  - name: b
    priority: 5
    urls: [{url: "{{MOCK}}", protocols: [anthropic]}]
    keys: [key-b1-000000]
    models: [m1, m2]
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
{{TOKEN_EXTRA}}
`

func startLimits(t *testing.T, aExtra, tokenExtra string, script func(*mockupstream.Recorded) mockupstream.Reply) (*gateway, *mockupstream.Server) {
	t.Helper()
	m, u := startMock(t, mockupstream.Options{Script: script})
	cfg := strings.NewReplacer("{{MOCK}}", u, "{{A_EXTRA}}", aExtra, "{{TOKEN_EXTRA}}", tokenExtra).Replace(limitsConfig)
	return startGateway(t, cfg), m
}

func sendModel(t *testing.T, g *gateway, model string) (int, string) {
	t.Helper()
	resp, body := post(t, g.URL+"/v1/messages", `{"model":"`+model+`","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"x-api-key": testToken, "anthropic-version": "2023-06-01"})
	return resp.StatusCode, body
}

func lastKey(m *mockupstream.Server) string {
	r := m.Requests()
	if len(r) == 0 {
		return ""
	}
	return r[len(r)-1].Key
}

func TestChannelLimitsSkipWithoutCooldown(t *testing.T) {
	now := time.Now()
	closed := fmt.Sprintf("%02d:%02d-%02d:%02d", (now.Hour()+2)%24, 0, (now.Hour()+3)%24, 0)
	cases := []struct{ name, extra string }{
		{"rpm_limit", "    rpm_limit: 1"},
		{"active_hours", `    active_hours: "` + closed + `"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, m := startLimits(t, c.extra, "", nil)
			if c.name == "rpm_limit" {
				sendModel(t, g, "m1")
				if lastKey(m) != "key-a1-000000" {
					t.Fatalf("first request went to %s", lastKey(m))
				}
			}
			if st, body := sendModel(t, g, "m1"); st != 200 {
				t.Fatalf("status %d %s", st, body)
			}
			if lastKey(m) != "key-b1-000000" {
				t.Fatalf("request went to %s, want channel b", lastKey(m))
			}
			if n := len(g.Engine.Cooldowns().List()); n != 0 {
				t.Fatalf("a limit caused %d cooldowns", n)
			}
		})
	}
}

// holdingScript keeps every stream open until release is closed.
func holdingScript(release chan struct{}) func(*mockupstream.Recorded) mockupstream.Reply {
	return func(r *mockupstream.Recorded) mockupstream.Reply {
		rep := mockupstream.DefaultReply(r)
		if r.Stream {
			<-release
		}
		return rep
	}
}

func TestConcurrencyLimits(t *testing.T) {
	for _, c := range []struct{ name, aExtra, tokenExtra string }{
		{"channel", "    max_concurrency: 1", ""},
		{"token", "", "    max_concurrency: 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			release := make(chan struct{})
			g, m := startLimits(t, c.aExtra, c.tokenExtra, holdingScript(release))
			done := make(chan int, 1)
			go func() {
				resp, _ := post(t, g.URL+"/v1/messages", `{"model":"m1","stream":true,"max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`,
					map[string]string{"x-api-key": testToken, "anthropic-version": "2023-06-01"})
				done <- resp.StatusCode
			}()
			// Wait until the held request owns its slot (channel a's, or the
			// token's), not merely until it is in flight, and until the mock
			// has recorded it: otherwise it may be recorded after the second
			// request, and lastKey below would name it instead.
			holding := func() bool {
				if len(m.Requests()) == 0 {
					return false
				}
				if c.name == "token" {
					n, _ := g.Engine.TokenLoad("tester")
					return n > 0
				}
				for _, st := range g.Engine.ChannelStates() {
					if st.Name == "a" {
						return st.InFlight > 0
					}
				}
				return false
			}
			wait.Eventually(t, 5*time.Second, "the first request holding its slot", holding)
			st, body := sendModel(t, g, "m2")
			close(release)
			if c.name == "channel" {
				if st != 200 || lastKey(m) != "key-b1-000000" {
					t.Fatalf("second request: %d %s via %s, want channel b", st, body, lastKey(m))
				}
			} else if st != 429 || !strings.Contains(body, "max_concurrency") {
				t.Fatalf("second request: %d %s, want 429 naming max_concurrency", st, body)
			}
			if st := <-done; st != 200 {
				t.Fatalf("held request: %d", st)
			}
		})
	}
}

func TestTokenRules(t *testing.T) {
	cases := []struct {
		name, tokenExtra, model string
		status                  int
		contains, via           string
	}{
		{"models glob", `    models: ["m1*"]`, "m2", 403, "may not use model", ""},
		{"channel deny", `    channels: {deny: [a]}`, "m1", 200, "", "key-b1-000000"},
		{"channel allow", `    channels: {allow: [b]}`, "m1", 200, "", "key-b1-000000"},
		{"expired", `    expires: 2020-01-01`, "m1", 403, "expired", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, m := startLimits(t, "", c.tokenExtra, nil)
			st, body := sendModel(t, g, c.model)
			if st != c.status || !strings.Contains(body, c.contains) {
				t.Fatalf("%d %s; want %d containing %q", st, body, c.status, c.contains)
			}
			if c.via != "" && lastKey(m) != c.via {
				t.Fatalf("served via %s, want %s", lastKey(m), c.via)
			}
		})
	}
	t.Run("rpm_limit", func(t *testing.T) {
		g, _ := startLimits(t, "", "    rpm_limit: 2", nil)
		for i := range 2 {
			if st, _ := sendModel(t, g, "m1"); st != 200 {
				t.Fatalf("request %d: %d", i, st)
			}
		}
		if st, body := sendModel(t, g, "m1"); st != 429 || !strings.Contains(body, "rpm_limit") {
			t.Fatalf("third: %d %s", st, body)
		}
	})
}

// TestRestartKeepsCooldowns: cooldowns written through the store are
// loaded by a fresh registry, as after a restart.
func TestRestartKeepsCooldowns(t *testing.T) {
	g, _ := startLimits(t, "", "", nil)
	reg := cooldown.New(nil, engine.StorePersister(g.Store))
	k := cooldown.Key{Scope: failure.ScopeKey, Channel: "a", KeyFP: "key-…0000#0badcafe"}
	reg.Strike(k, failure.Outcome{Kind: failure.KindAuth, Scope: failure.ScopeKey, RetryAfter: time.Minute}, cooldown.Policy{})
	reg.Close() // flush the asynchronous writes

	fresh := cooldown.New(nil, nil)
	if err := engine.LoadCooldowns(context.Background(), g.Store, fresh, time.Now()); err != nil {
		t.Fatal(err)
	}
	until, cooling := fresh.Until(k)
	if !cooling || time.Until(until) < 50*time.Second {
		t.Fatalf("after restart: cooling=%v until=%v", cooling, until)
	}
}

// TestConcurrentSelectionAndCooldowns runs many requests at once while
// upstream failures strike and successes clear cooldowns; run with -race.
func TestConcurrentSelectionAndCooldowns(t *testing.T) {
	var mu sync.Mutex
	n := 0
	g, _ := startLimits(t, "", "", func(r *mockupstream.Recorded) mockupstream.Reply {
		mu.Lock()
		n++
		odd := n%3 == 0
		mu.Unlock()
		if odd {
			return mockupstream.Reply{Status: 500, Raw: []byte(`{"type":"error","error":{"type":"api_error","message":"flaky"}}`)}
		}
		return mockupstream.DefaultReply(r)
	})
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			model := []string{"m1", "m2"}[i%2]
			req, _ := http.NewRequest("POST", g.URL+"/v1/messages", strings.NewReader(`{"model":"`+model+`","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`))
			req.Header.Set("x-api-key", testToken)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
			g.Engine.ChannelStates()
			g.Engine.Cooldowns().List()
		}()
	}
	wg.Wait()
	g.waitLogs(t, 40)
	if g.Engine.InFlight() != 0 {
		t.Fatalf("in flight after all finished: %d", g.Engine.InFlight())
	}
}

// TestFallbackWhenTheRestIsOverItsLimit: channel a cools, channel b is at
// its rpm_limit; with fallback on, a (recovering soonest) is tried rather
// than answering 503.
func TestFallbackWhenTheRestIsOverItsLimit(t *testing.T) {
	var failA atomic.Bool
	failA.Store(true)
	m, u := startMock(t, mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		if r.Key == "key-a1-000000" && failA.Load() {
			return mockupstream.Reply{Status: 500, Raw: []byte(`{"type":"error","error":{"type":"api_error","message":"down"}}`)}
		}
		return mockupstream.DefaultReply(r)
	}})
	cfg := strings.NewReplacer("{{MOCK}}", u, "{{A_EXTRA}}", "", "{{TOKEN_EXTRA}}", "").Replace(limitsConfig)
	cfg = strings.Replace(cfg, "    keys: [key-b1-000000]\n", "    keys: [key-b1-000000]\n    rpm_limit: 1\n", 1)
	g := startGateway(t, cfg)
	if st, _ := sendModel(t, g, "m1"); st != 200 || lastKey(m) != "key-b1-000000" {
		t.Fatalf("first: %d via %s", st, lastKey(m))
	}
	failA.Store(false)
	if st, body := sendModel(t, g, "m1"); st != 200 || lastKey(m) != "key-a1-000000" {
		t.Fatalf("second: %d %s via %s, want the cooling channel a as fallback", st, body, lastKey(m))
	}
}
