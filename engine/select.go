package engine

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/affinity"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/pricing"
)

// Unpriced models and cost limits. A request for a model with no
// price is logged with cost 0, so a cost limit cannot hold it back: a token
// with cost_limit, or a channel with daily_cost_limit, could spend without
// bound. Unless routing.unpriced is "allow", such routes are dropped before
// the attempt loop, and a request left with none is refused with a 403 that
// says which model and which limit.
//
// A relayed answer whose usage ccload does not read (request.unbooked:
// speech audio, a streamed image or transcription) has an unknown cost
// too, whatever the model's price: it is refused and flagged the same way.

// priced reports whether requests on rt get a price: the name sent upstream
// has one, or else the name the client asked for does (as cost falls back).
func priced(table *pricing.Table, rt config.Route) bool {
	if _, ok := table.Lookup(rt.Upstream); ok {
		return true
	}
	_, ok := table.Lookup(rt.Model)
	return ok
}

// pricedRoutes drops the routes whose model has no price when a cost limit
// applies to them: every route when the token has a cost_limit, else the
// routes to channels with a daily_cost_limit. It returns routes itself when
// nothing is dropped.
func (e *Engine) pricedRoutes(r *request, routes []config.Route) ([]config.Route, *clientError) {
	if r.snap.Routing.Unpriced == config.UnpricedAllow {
		return routes, nil
	}
	table := e.Prices(r.snap)
	limited := func(rt config.Route) bool { return r.token.CostLimit > 0 || rt.Channel.DailyCostLimit > 0 }
	var out []config.Route
	var dropped *config.Route
	for i, rt := range routes {
		if !limited(rt) || priced(table, rt) && !r.unbooked {
			if dropped != nil {
				out = append(out, rt)
			}
			continue
		}
		if dropped == nil {
			dropped = &routes[i]
			out = append(make([]config.Route, 0, len(routes)), routes[:i]...)
		}
	}
	if dropped == nil {
		return routes, nil
	}
	if len(out) > 0 {
		return out, nil
	}
	const fix = "add a price for it under pricing: in the config, or set routing.unpriced: allow"
	if r.unbooked {
		what := fmt.Sprintf("token %q's cost_limit of $%.2f", r.token.Name, r.token.CostLimit)
		if r.token.CostLimit <= 0 {
			what = fmt.Sprintf("channel %q's daily_cost_limit of $%.2f", dropped.Channel.Name, dropped.Channel.DailyCostLimit)
		}
		return nil, &clientError{Status: 403, Msg: fmt.Sprintf(
			"%s answers (audio, or a stream relayed as it is) carry no usage ccload reads, so %s cannot be enforced; ask without \"stream\" where the endpoint allows it, or set routing.unpriced: allow",
			r.passPath(), what)}
	}
	if r.token.CostLimit > 0 {
		return nil, &clientError{Status: 403, Msg: fmt.Sprintf(
			"model %q has no price, so token %q's cost_limit of $%.2f cannot be enforced; %s",
			r.model, r.token.Name, r.token.CostLimit, fix)}
	}
	return nil, &clientError{Status: 403, Msg: fmt.Sprintf(
		"model %q has no price, so channel %q's daily_cost_limit of $%.2f cannot be enforced; %s",
		r.model, dropped.Channel.Name, dropped.Channel.DailyCostLimit, fix)}
}

// UnpricedModels lists, in file order, the enabled models of ch that table
// cannot price (neither the upstream name nor the client-visible name has
// a price). Requests for them are logged as unpriced, or refused where a
// cost limit applies.
func UnpricedModels(table *pricing.Table, ch *config.Channel) []string {
	var out []string
	for _, m := range ch.Models {
		if m.Disabled {
			continue
		}
		if !priced(table, config.Route{Channel: ch, Model: m.Name, Upstream: m.Upstream}) {
			out = append(out, m.Name)
		}
	}
	return out
}

// effectivePriority applies routing.health_score (docs/routing.md, "Health score"):
//
//	priority − failure_rate × penalty × min(1, samples / min_samples)
//
// so a channel failing half of 40 requests with penalty 100 and
// min_samples 20 drops by 50, while one with 2 failures out of 4 samples
// drops by only 10: few samples are weak evidence.
func (e *Engine) effectivePriority(ch *config.Channel, hs config.HealthScore, now time.Time) float64 {
	p := float64(ch.Priority)
	if !hs.Enabled || hs.Penalty == 0 {
		return p
	}
	rate, n := e.reg.health.get(ch.Name).Rate(now, hs.Window.D())
	if n == 0 {
		return p
	}
	confidence := 1.0
	if hs.MinSamples > 0 {
		confidence = math.Min(1, float64(n)/float64(hs.MinSamples))
	}
	return p - rate*hs.Penalty*confidence
}

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
		case e.reg.ledger.ChannelOver(ch, clock.UTCDay(now)):
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

// Session affinity (engine/affinity): a session's request goes
// to the channel, key and URL that served its last success while that
// route is open (not cooling, not paused, under its limits when its turn
// comes) and of the best effective priority on offer. Otherwise the request
// is routed as usual and the session re-pins to whatever serves it, so
// priorities still win: a session that moved to a lower-priority channel
// during an outage moves back once a better one is healthy again.

// minShareSample is how many pinned sessions a group of equal channels
// must hold before routing.affinity.max_share is enforced; below it the
// shares of a handful of sessions mean nothing.
const minShareSample = 4

// identifySession names the request's session when affinity is on.
func identifySession(ctx *fasthttp.RequestCtx, r *request, in *members) {
	if !r.snap.Routing.Affinity.Enabled {
		return
	}
	r.session = affinity.Identify(r.ep.family, func(name string) string {
		return string(ctx.Request.Header.Peek(name))
	}, in.get)
}

// preferPinned moves the session's pinned route to the front of the plan
// when the rule above allows it, and remembers the pin for the key and URL
// choice (pinnedFirst). When the pinned channel holds more than max_share
// of the sessions pinned among its equals, the session is let go to the
// least loaded of them instead.
func (e *Engine) preferPinned(r *request, p *routePlan, now time.Time) {
	a := r.snap.Routing.Affinity
	if !a.Enabled || r.session.ID == "" || len(p.usable) == 0 || p.usable[0].anyway {
		return
	}
	pin, ok := e.reg.pins.GetKey(r.pinKey(), now)
	if !ok {
		return
	}
	hs := r.snap.Routing.HealthScore
	best := e.effectivePriority(p.usable[0].route.Channel, hs, now)
	var peers []string
	at := -1
	for i, c := range p.usable {
		if c.anyway || e.effectivePriority(c.route.Channel, hs, now) != best {
			break
		}
		peers = append(peers, c.route.Channel.Name)
		if c.route.Channel.Name == pin.Channel && c.route.Channel.Affinity {
			at = i
		}
	}
	if at < 0 {
		return
	}
	if len(peers) > 1 {
		if share, total := e.reg.pins.Share(pin.Channel, peers); total >= minShareSample && share > a.MaxShare {
			e.toFront(p.usable, e.leastPinned(p.usable[:len(peers)]))
			return
		}
	}
	r.pin = pin
	e.toFront(p.usable, at)
}

// leastPinned is the index of the candidate whose channel holds the fewest
// pinned sessions per unit of weight.
func (e *Engine) leastPinned(cs []candidate) int {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.route.Channel.Name
	}
	best, bestLoad := 0, -1.0
	for i, c := range cs {
		share, _ := e.reg.pins.Share(c.route.Channel.Name, names)
		load := share / float64(max(c.route.Channel.Weight, 1))
		if bestLoad < 0 || load < bestLoad {
			best, bestLoad = i, load
		}
	}
	return best
}

func (e *Engine) toFront(cs []candidate, i int) {
	if i <= 0 {
		return
	}
	c := cs[i]
	copy(cs[1:i+1], cs[:i])
	cs[0] = c
}

// pinnedFirst puts the pinned key (or URL) of the request's session first
// among a channel's usable ones, when the pin is on this channel.
func pinnedFirst(r *request, ch *config.Channel, idx []int, id func(int) string, want string) []int {
	if r.pin.Channel != ch.Name || want == "" {
		return idx
	}
	for j, i := range idx {
		if id(i) == want {
			if j > 0 {
				idx = slices.Clone(idx)
				copy(idx[1:j+1], idx[:j])
				idx[0] = i
			}
			break
		}
	}
	return idx
}

// pinKey is what a pin is kept under besides the token: the session and
// the model, because providers cache per model, and one agent session
// mixes models (Claude Code's small fast model for side tasks).
func (r *request) pinKey() affinity.SessionKey {
	if !r.keyed {
		// Once per request: preferPinned looks the pin up, repin sets it.
		r.sessionKey, r.keyed = affinity.Key(r.token.Name, r.session.ID, r.model), true
	}
	return r.sessionKey
}

// repin records the route that just served the request's session.
func (e *Engine) repin(r *request, c *attempt, now time.Time) {
	ch := c.route.Channel
	if !r.snap.Routing.Affinity.Enabled || !ch.Affinity || r.session.ID == "" {
		return
	}
	rt := affinity.Route{
		Channel: ch.Name,
		Key:     e.reg.keyID(ch.Keys[c.keyIndex]),
		URL:     e.reg.urlID(ch.URLs[c.urlIndex].URL), // no credentials: pins may be shared
	}
	if k := r.pinKey(); e.reg.pins.PinKey(k, rt, now) {
		e.sharePin(k, rt)
	}
}

// PinnedSessions is the number of sessions the affinity table holds.
func (e *Engine) PinnedSessions() int { return e.reg.pins.Len() }
