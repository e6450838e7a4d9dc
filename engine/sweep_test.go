package engine

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/affinity"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/engine/responsesws"
)

func snapOf(t *testing.T, yaml string) *config.Snapshot {
	t.Helper()
	s, err := config.Parse("test.yaml", []byte(yaml), config.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every entity the reload removes has "gone" in its identity (channel
// gone, keep's second URL and key, token t-gone, model gone-model), so a
// container that keeps any of them shows it in its keys.
const sweepBefore = `version: 1
channels:
  - {name: keep, urls: ["http://127.0.0.1:1/keep", "http://127.0.0.1:2/gone"], keys: [key-keep-000000, key-gone-a00000], models: [m]}
  - {name: gone, urls: ["http://127.0.0.1:3/gone"], keys: [key-gone-b00000], models: [m, gone-model]}
tokens:
  - {name: t-keep, token_sha256: "0000000000000000000000000000000000000000000000000000000000000001"}
  - {name: t-gone, token_sha256: "0000000000000000000000000000000000000000000000000000000000000002"}
`

const sweepAfter = `version: 1
channels:
  - {name: keep, urls: ["http://127.0.0.1:1/keep"], keys: [key-keep-000000], models: [m]}
tokens:
  - {name: t-keep, token_sha256: "0000000000000000000000000000000000000000000000000000000000000001"}
`

func mapKeys[K comparable, V any](m *stateMap[K, V]) (keys []string) {
	for _, k := range m.keys() {
		keys = append(keys, fmt.Sprint(k))
	}
	return keys
}

// TestSweepDropsRuntimeStateOfRemovedEntities: after a reload, no
// container of the registry keeps anything of a channel, URL, key, model
// or token the file no longer has, and every container keeps the state of
// the entities that stayed. The test walks the registry's fields, so a new
// container it does not inspect fails it.
func TestSweepDropsRuntimeStateOfRemovedEntities(t *testing.T) {
	before, after := snapOf(t, sweepBefore), snapOf(t, sweepAfter)
	e := New(Options{})
	r := e.reg
	now := time.Now()
	pol := cooldownPolicy(before.Routing.Cooldown)
	for _, ch := range before.Channels {
		r.channelLoad.get(ch.Name).Admit(now, 0, 0)
		r.health.get(ch.Name).Add(now, true)
		e.SetPaused(ch.Name, true)
		r.lastChecks.store(ch.Name, ProbeResult{})
		r.keyCursor(ch.Name, false)
		r.keyCursor(ch.Name, true)
		for i, u := range ch.URLs {
			r.observeURL(ch.Name, u.URL, 10)
			r.wsRefused.store(u.URL, now)
			r.cooldowns.Strike(e.urlScope(ch, i), failure.Outcome{Kind: failure.KindServer, Scope: failure.ScopeURL}, pol)
		}
		for i := range ch.Keys {
			r.cooldowns.Strike(e.keyScope(ch, i), failure.Outcome{Kind: failure.KindServer, Scope: failure.ScopeKey}, pol)
		}
		for _, m := range ch.Models {
			r.cooldowns.Strike(modelScope(ch, m.Upstream), failure.Outcome{Kind: failure.KindServer, Scope: failure.ScopeModel}, pol)
			r.unpriced.store(m.Upstream, true)
		}
		r.cooldowns.Strike(channelScope(ch), failure.Outcome{Kind: failure.KindServer, Scope: failure.ScopeChannel}, pol)
		r.pins.Pin("t-keep", "session-"+ch.Name, affinity.Route{Channel: ch.Name, Key: "k", URL: ch.URLs[0].URL}, now)
		r.ledger.ChannelOver(&config.Channel{Name: ch.Name, DailyCostLimit: 1}, now.UTC().Format(time.DateOnly))
	}
	e.orderGroup(before.Routes("m"))
	r.smoothWRR("keep", []string{"keep"}, []int{1})
	for _, tk := range before.Tokens {
		r.tokenLoad.get(tk.Name).Admit(now, 0, 0)
		r.socketCount(tk.Name).Add(1)
		r.wsSessions.Put(config.DefaultWebSockets, responsesws.SessionKey(tk.Name, "s"), tk.Name, "resp_"+tk.Name, nil, now)
		if err := r.ledger.ReserveToken(&config.Token{Name: tk.Name, CostLimit: 1}); err != nil {
			t.Fatal(err)
		}
	}

	// What each container holds, as strings naming the entities. A field
	// missing here fails the test: sweep it, then list it here.
	inspect := map[string]func() []string{
		"channelLoad": func() []string { return mapKeys(&r.channelLoad.m) },
		"health":      func() []string { return mapKeys(&r.health.m) },
		"paused":      func() []string { return mapKeys(&r.paused) },
		"lastChecks":  func() []string { return mapKeys(&r.lastChecks) },
		"keyCursors":  func() []string { return mapKeys(&r.keyCursors) },
		"wrr":         func() []string { return mapKeys(&r.wrr) },
		"urls":        func() []string { return mapKeys(&r.urls) },
		"urlIDs":      func() []string { return mapKeys(&r.urlIDs) },
		"keyIDs":      func() []string { return mapKeys(&r.keyIDs) },
		"tokenLoad":   func() []string { return mapKeys(&r.tokenLoad.m) },
		"sockets":     func() []string { return mapKeys(&r.sockets) },
		"wsSessions":  func() []string { return r.wsSessions.Tokens() },
		"wsRefused":   func() []string { return mapKeys(&r.wsRefused) },
		"unpriced":    func() []string { return mapKeys(&r.unpriced) },
		"ledger": func() (keys []string) {
			tokens, channels := r.ledger.Known()
			for _, k := range tokens {
				keys = append(keys, "token "+k)
			}
			for _, k := range channels {
				keys = append(keys, "channel "+k)
			}
			return keys
		},
		"pins": func() (keys []string) {
			for _, ch := range before.Channels {
				if rt, ok := r.pins.Get("t-keep", "session-"+ch.Name, now); ok {
					keys = append(keys, rt.Channel)
				}
			}
			return keys
		},
		"cooldowns": func() (keys []string) {
			for _, c := range r.cooldowns.List() {
				keys = append(keys, c.Key.String())
			}
			return keys
		},
	}
	// Key and URL cooldowns name their scope by id, not by the raw value.
	goneIDs := []string{"gone"}
	for _, ch := range before.Channels {
		for _, k := range ch.Keys {
			if strings.Contains(k.Reveal(), "gone") {
				goneIDs = append(goneIDs, keyID(k))
			}
		}
	}
	held := map[string][]string{}
	rt := reflect.TypeFor[registry]()
	for i := range rt.NumField() {
		name := rt.Field(i).Name
		f, ok := inspect[name]
		if !ok {
			t.Errorf("registry.%s is not inspected by this test: make registry.sweep drop its removed entries and list it here", name)
			continue
		}
		held[name] = f()
		if len(held[name]) == 0 {
			t.Fatalf("registry.%s is empty before the sweep: the test did not fill it", name)
		}
	}

	e.Sweep(after)

	for name, f := range inspect {
		keys := f()
		for _, k := range keys {
			for _, gone := range goneIDs {
				if strings.Contains(k, gone) {
					t.Errorf("registry.%s keeps %q of a removed entity after the sweep", name, k)
				}
			}
		}
		if len(keys) == 0 {
			t.Errorf("registry.%s lost the state of the entities that stayed (before: %q)", name, held[name])
		}
	}
}
