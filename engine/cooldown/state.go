package cooldown

import (
	"time"

	"github.com/ccload/ccload/engine/failure"
)

// What the router needs to know about a component beyond "cooling or not"
// (the routing rule is in engine/select.go):
//
//   - whether its cooldown is for a reason a retry cannot fix right now
//     (Hard), as opposed to a transient one (server errors, overload,
//     timeouts, network), which may clear at any moment;
//   - whether its cooldown has ended but no request has succeeded on it
//     since (HalfOpen): it then takes one trial request at a time
//     (ClaimTrial) before full traffic.
//
// A reason is hard when the failure was an invalid key (auth), a missing
// model (not_found), or a key's rate limit that came with the upstream's
// own reset time. It counts as hard only once confirmed: the component
// failed that way on ConfirmStrikes consecutive attempts with no success
// between. A single such failure among successes is noise (a relay that
// flaps, a load balancer that briefly routed to a bad backend); its
// cooldown still orders the component last, but does not shut it out.

// ConfirmStrikes is how many consecutive hard failures make a cooldown
// hard.
const ConfirmStrikes = 2

// TrialWindow is how long a claimed half-open trial keeps others off: the
// trial normally ends sooner, with a success (which forgets the entry) or a
// failure (which starts a new cooldown). The window only bounds a trial
// whose request ended without either (a client that left, a bad request).
const TrialWindow = 30 * time.Second

// State is a component's routing state now.
type State struct {
	Cooling   bool
	Until     time.Time // end of the cooldown, when Cooling
	Hard      bool      // Cooling for a confirmed reason a retry cannot fix now
	HalfOpen  bool      // cooldown over, no success since
	TrialBusy bool      // HalfOpen and another request holds the trial
}

// hardReason reports whether a failure names a cause a retry cannot fix
// now. A model-scope rate limit is overload (transient), a key-scope one is
// the key's quota, hard only with an upstream reset time.
func hardReason(scope failure.Scope, kind failure.Kind, hinted bool) bool {
	switch kind {
	case failure.KindAuth, failure.KindNotFound:
		return true
	case failure.KindRateLimit:
		return hinted && scope != failure.ScopeModel
	}
	return false
}

// Confirmed reports whether e's cooldown is for a confirmed hard reason
// (what State calls Hard), so that another instance applying e through the
// change feed treats it the same way.
func (e Entry) Confirmed() bool {
	return hardReason(e.Key.Scope, e.Kind, e.Hinted) && e.hardStrikes >= ConfirmStrikes
}

// State returns k's routing state now. A component never struck, or
// forgotten by a success, is the zero State: usable.
func (r *Registry) State(k Key) State {
	k = k.Normalize()
	r.mu.RLock()
	e, ok := r.entries[k]
	var cooling State // what State says while k cools
	var trialUntil time.Time
	if ok {
		cooling = State{Cooling: true, Until: e.Until,
			Hard: hardReason(k.Scope, e.Kind, e.Hinted) && e.hardStrikes >= ConfirmStrikes}
		trialUntil = e.trialUntil
	}
	r.mu.RUnlock()
	if !ok {
		return State{}
	}
	// The clock only for a component with an entry (and outside the lock,
	// as before): routing asks for the state of every key, URL, model and
	// channel of each candidate route, ten reads of the clock per request
	// for components with none (perf).
	now := r.clock.Now()
	if now.Before(cooling.Until) {
		return cooling
	}
	return State{HalfOpen: true, TrialBusy: now.Before(trialUntil)}
}

// ClaimTrial takes the half-open trial of k for the caller, so that others
// see it busy for up to TrialWindow. It reports false when k is cooling or
// another request holds the trial; a component with no entry needs no
// trial and is always claimable.
func (r *Registry) ClaimTrial(k Key) bool {
	k = k.Normalize()
	now := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.entries[k]
	if !ok {
		return true
	}
	if now.Before(e.Until) || now.Before(e.trialUntil) {
		return false
	}
	e.trialUntil = now.Add(TrialWindow)
	return true
}
