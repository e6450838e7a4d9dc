package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/internal/clock"
)

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
