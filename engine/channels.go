package engine

import (
	"sort"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/cooldown"
)

// ChannelState is a channel's live state for the admin API and CLI.
type ChannelState struct {
	Name      string           `json:"name"`
	Enabled   bool             `json:"enabled"`
	Paused    bool             `json:"paused"` // runtime override, not in the YAML
	InFlight  int64            `json:"in_flight"`
	RPM       int              `json:"rpm"`
	URLs      []URLState       `json:"urls"`
	Cooldowns []cooldown.Entry `json:"cooldowns"`
	LastCheck *ProbeResult     `json:"last_check,omitempty"` // latest scheduled check
	// Unpriced lists the enabled models no price layer prices.
	Unpriced []string `json:"unpriced,omitempty"`
}

// URLState is one channel URL's observed latency, and for a URL that
// declares no protocols what detection learned (detect.go).
type URLState struct {
	URL      string      `json:"url"`
	EWMAms   float64     `json:"ewma_ms"`
	Visited  bool        `json:"visited"`
	Detected []Detection `json:"detected,omitempty"`
}

// ChannelStates lists every channel of the current snapshot with its live
// state, in file order.
func (e *Engine) ChannelStates() []ChannelState {
	snap := e.cfg.Current()
	now := e.clock.Now()
	byChannel := map[string][]cooldown.Entry{}
	for _, c := range e.reg.cooldowns.List() {
		byChannel[c.Key.Channel] = append(byChannel[c.Key.Channel], c)
	}
	out := make([]ChannelState, 0, len(snap.Channels))
	prices := e.Prices(snap)
	for _, ch := range snap.Channels {
		l := e.reg.channelLoad.get(ch.Name)
		st := ChannelState{
			Name: ch.Name, Enabled: ch.Enabled, Paused: e.Paused(ch.Name),
			InFlight: l.inflight.Load(), RPM: l.rpm(now), Cooldowns: byChannel[ch.Name],
			Unpriced: UnpricedModels(prices, ch),
		}
		for _, u := range ch.URLs {
			ms, visited := e.reg.urlLatency(ch.Name, u.URL)
			if !visited {
				ms = 0
			}
			st.URLs = append(st.URLs, URLState{URL: u.URL, EWMAms: ms, Visited: visited, Detected: e.Detected(ch.Name, u.URL)})
		}
		if res, ok := e.LastCheck(ch.Name); ok {
			st.LastCheck = &res
		}
		sort.Slice(st.Cooldowns, func(i, j int) bool { return st.Cooldowns[i].Until.Before(st.Cooldowns[j].Until) })
		out = append(out, st)
	}
	return out
}

// TokenLoad is a token's in-flight count and requests in the last minute.
func (e *Engine) TokenLoad(name string) (inFlight int64, rpm int) {
	l := e.reg.tokenLoad.get(name)
	return l.inflight.Load(), l.rpm(e.clock.Now())
}

// SetPaused pauses or resumes a channel at runtime. The YAML stays the
// source of truth: callers persist the override (store.Override) and show
// it as such.
func (e *Engine) SetPaused(channel string, paused bool) {
	if paused {
		e.reg.paused.store(channel, time.Now())
	} else {
		e.reg.paused.delete(channel)
	}
}

// Paused reports whether a channel is paused at runtime.
func (e *Engine) Paused(channel string) bool {
	_, ok := e.reg.paused.load(channel)
	return ok
}

// Sweep drops the runtime state and cooldowns whose channel, key, URL,
// model or token is gone from snap (registry.sweep; call it after a
// reload), and the upstream clients, with their idle connections, of
// proxies no channel uses any more; state of unchanged entities stays.
func (e *Engine) Sweep(snap *config.Snapshot) {
	e.reg.sweep(snap)
	e.upstream.Keep(snapshotProxies(snap))
	e.view(snap) // built now rather than by the first request on snap
}
