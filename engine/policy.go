package engine

import (
	"fmt"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/failure"
)

// cooldownPolicy maps routing.cooldown onto the registry's policy. Network
// failures (refused, reset, DNS) cool a URL like a timeout does.
func cooldownPolicy(c config.Cooldown) cooldown.Policy {
	return cooldown.Policy{
		Initial: map[failure.Kind]time.Duration{
			failure.KindAuth:      c.Auth.D(),
			failure.KindRateLimit: c.RateLimit.D(),
			failure.KindServer:    c.Server.D(),
			failure.KindNotFound:  c.Server.D(),
			failure.KindTimeout:   c.Timeout.D(),
			failure.KindNetwork:   c.Timeout.D(),
		},
		Min: c.Min.D(),
		Max: c.Max.D(),
	}
}

// strikeScope cools the narrowest scope the failure names, then promotes it to
// the whole channel when every enabled model (for a model failure) or every
// key (for a key failure) of the channel is cooling (design §6).
// It is the one way a failure cools: a failed attempt (Engine.failed) and a
// failed scheduled check (Engine.Check) both strike through it.
func (e *Engine) strikeScope(snap *config.Snapshot, rt config.Route, ki, ui int, o failure.Outcome) {
	ch := rt.Channel
	pol := cooldownPolicy(snap.Routing.Cooldown)
	o.Message = e.redactor(snap).Message(o.Message) // the reason is stored and shown
	var siblings []cooldownKey
	switch o.Scope {
	case failure.ScopeKey:
		e.reg.cooldowns.Strike(e.keyScope(ch, ki), o, pol)
		for i := range ch.Keys {
			siblings = append(siblings, e.keyScope(ch, i))
		}
	case failure.ScopeURL:
		e.reg.cooldowns.Strike(e.urlScope(ch, ui), o, pol)
	case failure.ScopeModel:
		e.reg.cooldowns.Strike(modelScope(ch, rt.Upstream), o, pol)
		for _, m := range ch.Models {
			if !m.Disabled {
				siblings = append(siblings, modelScope(ch, m.Upstream))
			}
		}
	case failure.ScopeChannel:
		e.reg.cooldowns.Strike(channelScope(ch), o, pol)
	}
	if len(siblings) == 0 {
		return
	}
	if until, all := e.reg.cooldowns.AllCooling(siblings); all {
		promoted := o
		promoted.Scope = failure.ScopeChannel
		promoted.RetryAfter = max(until.Sub(e.clock.Now()), time.Second)
		promoted.Message = fmt.Sprintf("every %s of the channel is cooling", o.Scope)
		e.reg.cooldowns.Strike(channelScope(ch), promoted, pol)
	}
}
