package engine

import (
	"math/rand/v2"
	"slices"
	"strings"

	"ccload/config"
	"ccload/engine/cooldown"
	"ccload/engine/failure"
)

// orderRoutes returns the routes for one request in the order they should
// be tried: highest priority first, and inside one priority the smooth
// weighted round-robin winner first, then the others by weight.
func (e *Engine) orderRoutes(routes []config.Route) []config.Route {
	out := slices.Clone(routes)
	slices.SortStableFunc(out, func(a, b config.Route) int {
		return b.Channel.Priority - a.Channel.Priority
	})
	for start := 0; start < len(out); {
		end := start + 1
		for end < len(out) && out[end].Channel.Priority == out[start].Channel.Priority {
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
	win := e.state.smoothWRR(strings.Join(names, "\x00"), names, weights)
	g[0], g[win] = g[win], g[0]
	rest := g[1:]
	slices.SortStableFunc(rest, func(a, b config.Route) int {
		return max(b.Channel.Weight, 1) - max(a.Channel.Weight, 1)
	})
}

// keyOrder lists the channel's key indexes to try, cooling keys left out.
// round_robin starts at a rotating position; sequential always at the first.
func (e *Engine) keyOrder(ch *config.Channel) []int {
	n := len(ch.Keys)
	start := 0
	if ch.KeyStrategy != "sequential" && n > 1 {
		start = int(e.state.keyCursor(ch.Name) % uint64(n))
	}
	out := make([]int, 0, n)
	for i := range n {
		k := (start + i) % n
		if _, cooling := e.cooldowns.Until(keyScope(ch, k)); !cooling {
			out = append(out, k)
		}
	}
	return out
}

// urlOrder lists the channel's URL indexes to try, cooling URLs left out:
// never-visited URLs first (in file order) so every URL gets measured, then
// the rest drawn at random weighted by 1/EWMA latency, so faster URLs get
// most traffic while slower ones keep being sampled.
func (e *Engine) urlOrder(ch *config.Channel) []int {
	var fresh, seen []int
	var w []float64
	for i, u := range ch.URLs {
		if _, cooling := e.cooldowns.Until(urlScope(ch, i)); cooling {
			continue
		}
		ms, visited := e.state.urlLatency(ch.Name, u.URL)
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
	return fresh
}

// Cooldown keys for each scope (design §6). The model scope is keyed by the
// model actually sent upstream.
func keyScope(ch *config.Channel, i int) cooldown.Key {
	return cooldown.Key{Scope: failure.ScopeKey, Channel: ch.Name, KeyFP: ch.Keys[i].String()}
}

func urlScope(ch *config.Channel, i int) cooldown.Key {
	return cooldown.Key{Scope: failure.ScopeURL, Channel: ch.Name, URL: ch.URLs[i].URL}
}

func modelScope(ch *config.Channel, upstreamModel string) cooldown.Key {
	return cooldown.Key{Scope: failure.ScopeModel, Channel: ch.Name, Model: upstreamModel}
}

func channelScope(ch *config.Channel) cooldown.Key {
	return cooldown.Key{Scope: failure.ScopeChannel, Channel: ch.Name}
}
