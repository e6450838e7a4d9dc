package engine_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/ccloadtest/wait"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/failure"
)

// checksConfig: channel a serves m1 and m2 and probes m1 every 200ms;
// channel b has no check.
const checksConfig = `version: 1
storage: {driver: sqlite, dsn: "{{DB}}"}
channels:
  - name: a
    urls: [{url: "{{URL}}", protocols: [anthropic]}]
    keys: [key-a1-000000]
    models: [m1, m2]
    check: {model: m1, every: 200ms}
  - name: b
    urls: [{url: "{{URL}}", protocols: [anthropic]}]
    keys: [key-b1-000000]
    models: [m1]
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
`

// TestScheduledCheckCoolsAndClears: a failing scheduled check cools the
// scope the classifier blames, exactly as live traffic would, and the first
// passing check after the upstream recovers clears it.
func TestScheduledCheckCoolsAndClears(t *testing.T) {
	cases := []struct {
		name  string
		reply mockupstream.Reply
		scope failure.Scope
		kind  failure.Kind
	}{
		{"500 cools the model", mockupstream.Reply{Status: 500}, failure.ScopeModel, failure.KindServer},
		{"401 cools the key", mockupstream.Reply{Status: 401}, failure.ScopeKey, failure.KindAuth},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var failing atomic.Bool
			failing.Store(true)
			m, u := startMock(t, mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
				if failing.Load() {
					return c.reply
				}
				return ok(r)
			}})
			g := startGateway(t, strings.ReplaceAll(checksConfig, "{{URL}}", u))
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { g.Engine.RunChecks(ctx); close(done) }()
			t.Cleanup(func() { cancel(); <-done })

			cooling := func() []cooldown.Entry {
				var out []cooldown.Entry
				for _, e := range g.Engine.Cooldowns().List() {
					if e.Key.Scope == c.scope && e.Key.Channel == "a" {
						out = append(out, e)
					}
				}
				return out
			}
			wait.Eventually(t, 5*time.Second, "the failing check cools "+string(c.scope), func() bool { return len(cooling()) > 0 })
			e := cooling()[0]
			if e.Kind != c.kind || !strings.HasPrefix(e.Reason, "scheduled check:") {
				t.Errorf("entry %+v, want kind %s and a scheduled-check reason", e, c.kind)
			}
			if c.scope == failure.ScopeModel && e.Key.Model != "m1" {
				t.Errorf("cooled model %q, want the checked model m1", e.Key.Model)
			}
			if r, found := g.Engine.LastCheck("a"); !found || r.OK || r.Scope != c.scope {
				t.Errorf("LastCheck(a) = %+v, %v", r, found)
			}
			for _, e := range g.Engine.Cooldowns().List() {
				if e.Key.Channel == "b" {
					t.Errorf("channel b has no check but cools: %v", e.Key)
				}
			}
			for _, r := range m.Requests() {
				if r.Model != "m1" || r.Key != "key-a1-000000" {
					t.Errorf("check sent model %q with key %q, want m1 with channel a's key", r.Model, r.Key)
				}
			}

			failing.Store(false)
			wait.Eventually(t, 5*time.Second, "a passing check clears every cooldown of a", func() bool {
				for _, e := range g.Engine.Cooldowns().List() {
					if e.Key.Channel == "a" {
						return false
					}
				}
				return true
			})
			if r, found := g.Engine.LastCheck("a"); !found || !r.OK {
				t.Errorf("LastCheck(a) after recovery = %+v, %v", r, found)
			}
			for _, st := range g.Engine.ChannelStates() {
				if st.Name == "a" && (st.LastCheck == nil || !st.LastCheck.OK) {
					t.Errorf("ChannelStates: channel a's last check = %+v", st.LastCheck)
				}
			}
		})
	}
}
