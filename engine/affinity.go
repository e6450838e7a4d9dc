package engine

import (
	"slices"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/affinity"
)

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
