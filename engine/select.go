package engine

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/internal/clock"
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
// keeps the ones the routing rule allows (below).
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
	if ch.OAuth != "" {
		idx = e.accountOrder(ch, idx)
	}
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

// Routing under failure storms. Cooldowns order and thin out the
// candidates; they do not turn a recoverable request into an error. For one
// request, each route (channel × model) is visited at most once, within
// routing.max_attempts, in two passes:
//
//	| state of the route (worst of its channel and model scopes,     | pass                        |
//	|   best of its keys, best of its URLs)                           |                             |
//	|-----------------------------------------------------------------|-----------------------------|
//	| paused, outside active_hours, over daily_cost_limit             | never                       |
//	| at rpm_limit / max_concurrency when its turn comes              | skipped, no cooldown        |
//	| not cooling                                                     | 1, priority/health/WRR order|
//	| cooldown over, no success since (half-open), trial free         | 1, claims the one trial     |
//	| half-open, another request holds the trial                      | 2                           |
//	| cooling for a transient reason: server error, overload (5xx,    | 2 (cooldown.fallback: true),|
//	|   529, model-scope 429, error in a 200), timeout, network,      |   soonest recovery first,   |
//	|   key 429 without a reset time; or a hard reason seen once      |   then health               |
//	| cooling for a hard reason, confirmed by ConfirmStrikes failures | never, until it recovers    |
//	|   in a row: bad key (401/402/403), model not found (404),       |                             |
//	|   key 429 with the upstream's reset time                        |                             |
//
// Inside a route, pass 1 uses the keys and URLs that are not cooling (a
// half-open one included); pass 2 adds those cooling for a transient or
// unconfirmed reason, soonest recovery first. A key that fails moves to the
// next key, a URL failure to the next URL, a model or channel failure to
// the next route (design §5.4-5). The half-open trial of a component is
// claimed when the attempt that uses it starts; a success forgets the
// cooldown, a failure starts the next, longer one.

// gate is how a component (or a whole route) may be used now, from best to
// worst.
type gate int

const (
	gateOpen   gate = iota // not cooling, or half-open with the trial free
	gateWait               // cooling for a transient or unconfirmed reason, or trial busy
	gateClosed             // cooling for a confirmed hard reason
)

// scopeGate maps a component's cooldown state onto a gate, with the time
// it is expected to be usable (zero when open).
func scopeGate(st cooldown.State, now time.Time) (gate, time.Time) {
	switch {
	case st.Cooling && st.Hard:
		return gateClosed, st.Until
	case st.Cooling:
		return gateWait, st.Until
	case st.TrialBusy:
		return gateWait, now
	}
	return gateOpen, time.Time{}
}

// candidate is one route the attempt loop may try.
type candidate struct {
	route  config.Route
	anyway bool // pass 2: keys and URLs cooling for a transient reason may be used
}

// routePlan is the order in which one request visits its routes, and why
// others were left out.
type routePlan struct {
	usable  []candidate
	why     []string
	soonest time.Time // first recovery among routes left out
}

func (p *routePlan) note(s string) { p.why = append(p.why, s) }

// unavailable is the 503 answered when no route could be tried.
func (p *routePlan) unavailable(model string, now time.Time) *clientError {
	msg := fmt.Sprintf("no channel can serve model %q right now", model)
	if !p.soonest.IsZero() {
		msg += fmt.Sprintf("; the first cooldown ends in %s", p.soonest.Sub(now).Round(time.Second))
	}
	if len(p.why) > 0 {
		msg += " (" + strings.Join(p.why, "; ") + ")"
	}
	ce := &clientError{Status: 503, Msg: msg}
	if !p.soonest.IsZero() {
		ce.RetryAfter = p.soonest.Sub(now)
	}
	return ce
}

// plan puts a request's routes (already in priority/WRR order) into the
// order of the routing rule above.
func (e *Engine) plan(r *request, ordered []config.Route, now time.Time) routePlan {
	type waiting struct {
		c     candidate
		until time.Time
		prio  float64
	}
	var p routePlan
	var wait []waiting
	hs := r.snap.Routing.HealthScore
	for _, rt := range ordered {
		ch := rt.Channel
		switch {
		case e.Paused(ch.Name):
			p.note(ch.Name + " is paused")
			continue
		case !ch.ActiveHours.Contains(now):
			p.note(ch.Name + " is outside its active_hours")
			continue
		case e.reg.ledger.channelOver(ch, clock.UTCDay(now)):
			p.note(ch.Name + " reached its daily_cost_limit")
			continue
		}
		g, until := e.routeGate(rt, now)
		switch g {
		case gateOpen:
			p.usable = append(p.usable, candidate{route: rt})
			continue
		case gateWait:
			wait = append(wait, waiting{candidate{route: rt, anyway: true}, until, e.effectivePriority(ch, hs, now)})
		case gateClosed:
			p.note(ch.Name + " is cooling for a reason a retry cannot fix now")
		}
		if p.soonest.IsZero() || until.Before(p.soonest) {
			p.soonest = until
		}
	}
	if len(wait) > 0 && !r.snap.Routing.Cooldown.Fallback {
		p.note("routing.cooldown.fallback is off")
		wait = nil
	}
	slices.SortStableFunc(wait, func(a, b waiting) int {
		if c := a.until.Compare(b.until); c != 0 {
			return c
		}
		return -cmpFloat(a.prio, b.prio)
	})
	for _, w := range wait {
		p.usable = append(p.usable, w.c)
	}
	if len(p.usable) == 0 && !p.soonest.IsZero() {
		p.note("every route is cooling")
	}
	return p
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// routeGate is the gate of a route: the worst of its channel and model
// scopes, its best key and its best URL; and when it is expected to be
// usable (the latest of those).
func (e *Engine) routeGate(rt config.Route, now time.Time) (gate, time.Time) {
	ch := rt.Channel
	g, until := e.componentGate(channelScope(ch), now)
	worst := func(g2 gate, u2 time.Time) {
		g = max(g, g2)
		if u2.After(until) {
			until = u2
		}
	}
	worst(e.componentGate(modelScope(ch, rt.Upstream), now))
	worst(e.bestGate(len(ch.Keys), func(i int) cooldownKey { return e.keyScope(ch, i) }, now))
	worst(e.bestGate(len(ch.URLs), func(i int) cooldownKey { return e.urlScope(ch, i) }, now))
	return g, until
}

func (e *Engine) componentGate(k cooldownKey, now time.Time) (gate, time.Time) {
	return scopeGate(e.reg.cooldowns.State(k), now)
}

// bestGate is the best gate among n components, and the soonest time one
// of that gate is usable.
func (e *Engine) bestGate(n int, key func(int) cooldownKey, now time.Time) (gate, time.Time) {
	best, until := gateClosed, time.Time{}
	for i := range n {
		g, u := e.componentGate(key(i), now)
		if g < best || g == best && u.Before(until) {
			best, until = g, u
		}
	}
	if n == 0 {
		return gateOpen, time.Time{}
	}
	return best, until
}

// usableOrder filters and orders the indexes of a channel's keys or URLs
// (given in their preferred order) for one route: in pass 1 those whose
// gate is open, in pass 2 (anyway) also the waiting ones, after the open
// ones, soonest recovery first.
func (e *Engine) usableOrder(idx []int, key func(int) cooldownKey, anyway bool) []int {
	now := e.clock.Now()
	out := idx[:0:0]
	type w struct {
		i     int
		until time.Time
	}
	var waits []w
	for _, i := range idx {
		switch g, until := e.componentGate(key(i), now); g {
		case gateOpen:
			out = append(out, i)
		case gateWait:
			if anyway {
				waits = append(waits, w{i, until})
			}
		}
	}
	slices.SortStableFunc(waits, func(a, b w) int { return a.until.Compare(b.until) })
	for _, x := range waits {
		out = append(out, x.i)
	}
	return out
}

// claimTrials takes the half-open trial of every scope an attempt uses.
// Two requests racing for one trial may both go: the claim is there to keep
// the rest of the traffic off, not to serialise.
func (e *Engine) claimTrials(rt config.Route, ki, ui int) {
	ch := rt.Channel
	for _, k := range []cooldownKey{channelScope(ch), modelScope(ch, rt.Upstream), e.keyScope(ch, ki), e.urlScope(ch, ui)} {
		if st := e.reg.cooldowns.State(k); st.HalfOpen && !st.TrialBusy {
			e.reg.cooldowns.ClaimTrial(k)
		}
	}
}
