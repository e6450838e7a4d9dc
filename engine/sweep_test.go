package engine

import (
	"testing"
	"time"

	"ccload/config"
)

func snapOf(t *testing.T, yaml string) *config.Snapshot {
	t.Helper()
	s, err := config.Parse("test.yaml", []byte(yaml), config.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const sweepBefore = `version: 1
channels:
  - {name: a, urls: ["http://127.0.0.1:1", "http://127.0.0.1:2"], keys: [key-a1-000000, key-a2-000000], models: [m]}
  - {name: b, urls: ["http://127.0.0.1:3"], keys: [key-b1-000000], models: [m]}
tokens:
  - {name: t1, token_sha256: "0000000000000000000000000000000000000000000000000000000000000001"}
  - {name: t2, token_sha256: "0000000000000000000000000000000000000000000000000000000000000002"}
`

// channel b, a's second URL and key, and token t2 are removed.
const sweepAfter = `version: 1
channels:
  - {name: a, urls: ["http://127.0.0.1:1"], keys: [key-a1-000000], models: [m]}
tokens:
  - {name: t1, token_sha256: "0000000000000000000000000000000000000000000000000000000000000001"}
`

func keysOf(m interface{ Range(func(k, v any) bool) }) (keys []any) {
	m.Range(func(k, _ any) bool { keys = append(keys, k); return true })
	return keys
}

// TestSweepDropsRuntimeStateOfRemovedEntities: after a reload, nothing is
// kept for a channel, URL, key or token the file no longer has, and the
// state of those it kept survives.
func TestSweepDropsRuntimeStateOfRemovedEntities(t *testing.T) {
	before, after := snapOf(t, sweepBefore), snapOf(t, sweepAfter)
	e := New(Options{})
	now := time.Now()
	for _, ch := range before.Channels {
		e.channelLoad.get(ch.Name).admit(now, 0, 0)
		e.health.get(ch.Name).add(now, true)
		e.SetPaused(ch.Name, true)
		e.lastChecks.Store(ch.Name, ProbeResult{})
		e.state.keyCursor(ch.Name)
		for _, u := range ch.URLs {
			e.state.observeURL(ch.Name, u.URL, 10)
		}
		for i := range ch.Keys {
			e.keyScope(ch, i)
		}
	}
	e.orderGroup(before.Routes("m"))
	for _, tk := range before.Tokens {
		e.tokenLoad.get(tk.Name).admit(now, 0, 0)
		e.ledger.reserveToken(&config.Token{Name: tk.Name, CostLimit: 1})
	}
	e.ledger.channelOver(&config.Channel{Name: "b", DailyCostLimit: 1}, now.UTC().Format(time.DateOnly))

	e.Sweep(after)

	for name, keys := range map[string][]any{
		"channelLoad": keysOf(&e.channelLoad.m), "health": keysOf(&e.health.m), "paused": keysOf(&e.paused),
		"lastChecks": keysOf(&e.lastChecks), "key cursors": keysOf(&e.state.keys),
	} {
		if len(keys) != 1 || keys[0] != "a" {
			t.Errorf("%s after the sweep: %v, want only channel a", name, keys)
		}
	}
	if keys := keysOf(&e.state.urls); len(keys) != 1 || keys[0] != "a\x00http://127.0.0.1:1" {
		t.Errorf("URL stats: %q", keys)
	}
	if keys := keysOf(&e.state.keyIDs); len(keys) != 1 || keys[0] != "key-a1-000000" {
		t.Errorf("key ids kept for %d keys, want only a's first", len(keys))
	}
	if keys := keysOf(&e.tokenLoad.m); len(keys) != 1 || keys[0] != "t1" {
		t.Errorf("token loads: %v", keys)
	}
	if len(e.state.wrr) != 0 {
		t.Errorf("round-robin sets naming channel b kept: %v", e.state.wrr)
	}
	if len(e.ledger.tokens) != 1 || e.ledger.tokens["t1"] == nil || len(e.ledger.channels) != 0 {
		t.Errorf("ledger tokens %v channels %v", e.ledger.tokens, e.ledger.channels)
	}
}
