package engine

import (
	"time"

	"github.com/ccload/ccload/internal/clock"
)

// TimerClock is a Clock that also runs timers. When the injected Clock is
// one (clock.Fake), an attempt's first-byte and total timeouts and the
// request's deadline follow it, so failover tests advance time instead of
// waiting for it. Both upstream clients stop the moment such a timer ends
// the attempt's context (the fast one through doWatched); the fast
// client's header deadline (headerDeadline) stays on the wall clock as a
// backstop.
type TimerClock interface {
	clock.Clock
	// AfterFunc calls f in its own goroutine once d has passed on this
	// clock, unless the returned stop is called first.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// afterFunc runs f after d on the engine's clock; d <= 0 means never. It
// returns the function that stops it.
func (e *Engine) afterFunc(d time.Duration, f func()) (stop func()) {
	if d <= 0 {
		return func() {}
	}
	if tc, ok := e.clock.(TimerClock); ok {
		s := tc.AfterFunc(d, f)
		return func() { s() }
	}
	t := time.AfterFunc(d, f)
	return func() { t.Stop() }
}

// injectedTimers reports whether the attempt timers run on an injected
// clock, which the wall-clock header deadline knows nothing of.
func (e *Engine) injectedTimers() bool {
	_, ok := e.clock.(TimerClock)
	return ok
}

// headerDeadline is when, on the wall clock, the first of the attempt's
// timers would fire (zero: neither is set): the fast upstream client stops
// waiting for response headers then, on its own, without a goroutine
// watching the attempt's context.
func (e *Engine) headerDeadline(firstByte, total time.Duration) time.Time {
	d := firstByte
	if d <= 0 || (total > 0 && total < d) {
		d = total
	}
	if d <= 0 {
		return time.Time{}
	}
	return time.Now().Add(d)
}
