package engine

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/failure"
)

// orderRoutes returns the routes for one request in the order they should
// be tried: highest effective priority first (prio, the configured
// priority less the health penalty), and inside one priority the smooth
// weighted round-robin winner first, then the others by weight.
func (e *Engine) orderRoutes(routes []config.Route, prio func(*config.Channel) float64) []config.Route {
	type cand struct {
		route config.Route
		prio  float64
	}
	cs := make([]cand, len(routes))
	for i, rt := range routes {
		cs[i] = cand{rt, prio(rt.Channel)}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(b.prio, a.prio) })
	out := make([]config.Route, len(cs))
	for i, c := range cs {
		out[i] = c.route
	}
	for start := 0; start < len(out); {
		end := start + 1
		for end < len(out) && cs[end].prio == cs[start].prio {
			end++
		}
		if end-start > 1 {
			e.orderGroup(out[start:end])
		}
		start = end
	}
	return out
}

// orderGroup reorders one priority group in place.
func (e *Engine) orderGroup(g []config.Route) {
	names := make([]string, len(g))
	weights := make([]int, len(g))
	for i, r := range g {
		names[i] = r.Channel.Name
		weights[i] = max(r.Channel.Weight, 1)
	}
	win := e.reg.smoothWRR(channelSetOf(names), names, weights)
	g[0], g[win] = g[win], g[0]
	rest := g[1:]
	slices.SortStableFunc(rest, func(a, b config.Route) int {
		return max(b.Channel.Weight, 1) - max(a.Channel.Weight, 1)
	})
}

// keyOrder lists the channel's key indexes to try: round_robin starts at a
// rotating position, sequential always at the first; then usableOrder
// keeps the ones the routing rule allows (candidates.go).
func (e *Engine) keyOrder(ch *config.Channel, anyway bool) []int {
	n := len(ch.Keys)
	start := 0
	if ch.KeyStrategy != "sequential" && n > 1 {
		start = int(e.reg.keyCursor(ch.Name, false) % uint64(n))
	}
	idx := make([]int, n)
	for i := range n {
		idx[i] = (start + i) % n
	}
	idx = e.accountOrder(ch, idx)
	return e.usableOrder(idx, func(i int) cooldownKey { return e.keyScope(ch, i) }, anyway)
}

// urlOrder lists the channel's URL indexes to try: never-visited URLs
// first (in file order) so every URL gets measured, then the rest drawn at
// random weighted by 1/EWMA latency, so faster URLs get most traffic while
// slower ones keep being sampled; then usableOrder keeps the ones the
// routing rule allows.
func (e *Engine) urlOrder(ch *config.Channel, anyway bool) []int {
	var fresh, seen []int
	var w []float64
	for i, u := range ch.URLs {
		ms, visited := e.reg.urlLatency(ch.Name, u.URL)
		if !visited {
			fresh = append(fresh, i)
			continue
		}
		seen = append(seen, i)
		w = append(w, 1/ms)
	}
	for len(seen) > 0 {
		total := 0.0
		for _, x := range w {
			total += x
		}
		r := rand.Float64() * total
		pick := len(seen) - 1
		for i, x := range w {
			if r < x {
				pick = i
				break
			}
			r -= x
		}
		fresh = append(fresh, seen[pick])
		seen = slices.Delete(seen, pick, pick+1)
		w = slices.Delete(w, pick, pick+1)
	}
	return e.usableOrder(fresh, func(i int) cooldownKey { return e.urlScope(ch, i) }, anyway)
}

// Cooldown keys for each scope (design §6). The model scope is keyed by the
// model actually sent upstream.
func (e *Engine) keyScope(ch *config.Channel, i int) cooldown.Key {
	return cooldown.Key{Scope: failure.ScopeKey, Channel: ch.Name, KeyFP: e.reg.keyID(ch.Keys[i])}
}

func (e *Engine) urlScope(ch *config.Channel, i int) cooldown.Key {
	return cooldown.Key{Scope: failure.ScopeURL, Channel: ch.Name, URL: e.reg.urlID(ch.URLs[i].URL)}
}

// URLOfID is the masked URL inside a urlID, for display and matching.
func URLOfID(id string) string {
	if i := strings.LastIndex(id, " #"); i >= 0 {
		return id[:i]
	}
	return id
}

func modelScope(ch *config.Channel, upstreamModel string) cooldown.Key {
	return cooldown.Key{Scope: failure.ScopeModel, Channel: ch.Name, Model: upstreamModel}
}

func channelScope(ch *config.Channel) cooldown.Key {
	return cooldown.Key{Scope: failure.ScopeChannel, Channel: ch.Name}
}
