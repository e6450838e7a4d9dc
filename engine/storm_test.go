package engine_test

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/failure"
)

const stormConfig = `version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: "{{DB}}"}
routing:
  cooldown: {fallback: true}
channels:
  - {name: c1, priority: 40, urls: [{url: "{{MOCK}}", protocols: [anthropic]}], keys: [key-c1-000000], models: [m1]}
  - {name: c2, priority: 30, urls: [{url: "{{MOCK}}", protocols: [anthropic]}], keys: [key-c2-000000], models: [m1]}
  - {name: c3, priority: 20, urls: [{url: "{{MOCK}}", protocols: [anthropic]}], keys: [key-c3-000000], models: [m1]}
  - {name: c4, priority: 10, urls: [{url: "{{MOCK}}", protocols: [anthropic]}], keys: [key-c4-000000], models: [m1]}
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
`

// TestStormTriesTransientCoolingRoutesSoonestFirst: every route is cooling.
// Those cooling for a transient reason are tried, soonest recovery first,
// until one answers; the one whose model is confirmed missing stays out.
func TestStormTriesTransientCoolingRoutesSoonestFirst(t *testing.T) {
	m, u := startMock(t, mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		if r.Key == "key-c3-000000" {
			return fail(500, nil, `{"type":"error","error":{"type":"api_error","message":"down"}}`)
		}
		return mockupstream.DefaultReply(r)
	}})
	g := startGateway(t, replaceMock(stormConfig, u))
	cds := g.Engine.Cooldowns()
	model := func(ch string) cooldown.Key { return cooldown.Key{Scope: failure.ScopeModel, Channel: ch, Model: "m1"} }
	server := failure.Outcome{Kind: failure.KindServer, Scope: failure.ScopeModel, Message: "overloaded"}
	missing := failure.Outcome{Kind: failure.KindNotFound, Scope: failure.ScopeModel, Message: "model not found"}
	for ch, d := range map[string]time.Duration{"c1": 20 * time.Minute, "c3": 10 * time.Minute, "c4": 30 * time.Minute} {
		o := server
		o.RetryAfter = d
		cds.Strike(model(ch), o, cooldown.Policy{})
	}
	// c2: model not found on two attempts in a row, each after the last
	// cooldown ended (a failure during a cooldown is the same episode).
	cds.Strike(model("c2"), missing, cooldown.Policy{Min: time.Nanosecond, Max: time.Nanosecond})
	for cds.State(model("c2")).Cooling {
		runtime.Gosched() // the nanosecond cooldown ends on the wall clock the harness uses
	}
	o := missing
	o.RetryAfter = time.Hour
	cds.Strike(model("c2"), o, cooldown.Policy{})
	if st := cds.State(model("c2")); !st.Hard {
		t.Fatalf("c2 state %+v, want hard", st)
	}

	st, body := sendModel(t, g, "m1")
	var keys []string
	for _, r := range m.Requests() {
		keys = append(keys, r.Key)
	}
	if st != 200 || !slices.Equal(keys, []string{"key-c3-000000", "key-c1-000000"}) {
		t.Fatalf("status %d %s, upstream keys %v; want c3 (soonest) then c1, never c2 (hard) nor c4", st, body, keys)
	}
	if st := cds.State(model("c1")); st.Cooling || st.HalfOpen {
		t.Fatalf("c1 after its success: %+v, want forgotten", st)
	}
}

func replaceMock(yaml, url string) string {
	return strings.ReplaceAll(yaml, "{{MOCK}}", url)
}
