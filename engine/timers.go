package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ccload/ccload/engine/failure"
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

// attemptTimers end an attempt's context when its first byte or its whole
// answer is late (routing.timeouts: first_byte, then non_stream or stream).
//
// They run only while something waits that the context can interrupt.
// net/http and the WebSocket client watch the context from the start, so
// they are armed before the request goes out. The HTTP/1.1 client bounds
// its wait for the response headers with a read deadline at the first of
// the two (headerBy, headerCause) and arms them when a read of the body
// has to wait for the socket (Arm, from engine/upstream). A small
// non-stream answer, read from the connection's buffer with its headers,
// never arms them: two
// runtime timers set and stopped and six closures less per request
// (perf).
type attemptTimers struct {
	e      *Engine
	cancel context.CancelCauseFunc
	// start is when the attempt began, on e.clock; firstByte and total
	// run from it (<= 0: none).
	start            time.Time
	firstByte, total time.Duration
	firstByteCause   error // errFirstByteTimeout, or errRequestDeadline when the request's deadline comes first

	mu                   sync.Mutex
	armed, content, done bool
	stopFirst, stopTotal func()
}

// Arm starts the timers with what is left of each, once; after stop it
// does nothing. Safe on a nil *attemptTimers (a probe has none).
func (t *attemptTimers) Arm() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.armed || t.done {
		return
	}
	t.armed = true
	spent := t.e.clock.Now().Sub(t.start)
	if !t.content {
		t.stopFirst = t.e.afterFunc(left(t.firstByte, spent), t.firedFirstByte)
	}
	t.stopTotal = t.e.afterFunc(left(t.total, spent), t.firedTotal)
}

// left is what remains of timeout d after spent: none stays none, one
// already past fires at once.
func left(d, spent time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return max(d-spent, time.Nanosecond)
}

func (t *attemptTimers) firedFirstByte() { t.cancel(t.firstByteCause) }
func (t *attemptTimers) firedTotal()     { t.cancel(errTotalTimeout) }

// gotContent stops the first-byte timer, or keeps it from starting:
// content arrived.
func (t *attemptTimers) gotContent() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.content = true
	t.stopFirst = stopped(t.stopFirst)
}

// stop stops both timers for good.
func (t *attemptTimers) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	t.stopFirst = stopped(t.stopFirst)
	t.stopTotal = stopped(t.stopTotal)
}

// stopped calls stop, when there is one, and returns nil to clear it.
func stopped(stop func()) func() {
	if stop != nil {
		stop()
	}
	return nil
}

// HeaderTimedOut ends the attempt as the timers would have, had they run
// while the HTTP/1.1 client waited for the headers until its deadline.
func (t *attemptTimers) HeaderTimedOut() { t.cancel(t.headerCause()) }

// headerCause is the cause the context would have ended with had the
// timers run while the HTTP/1.1 client waited for headers until headerBy:
// the first of the two to fire. The client ends the context with it
// itself when its header deadline passes (engine/upstream: h1Client.failed).
func (t *attemptTimers) headerCause() error {
	if t.firstByte > 0 && (t.total <= 0 || t.firstByte <= t.total) {
		return t.firstByteCause
	}
	return errTotalTimeout
}

// The causes an attempt's timers end its context with.
var (
	errFirstByteTimeout = errors.New("no first byte within routing.timeouts.first_byte")
	errTotalTimeout     = errors.New("response not complete within the configured timeout")
)

// errRequestDeadline ends an attempt still waiting for its first byte when
// the request's deadline passes. The route is not to blame (it did not
// exceed its own first_byte), so nothing cools for it.
var errRequestDeadline = errors.New("the request's deadline (routing.timeouts.request) passed before an answer started")

// deadline is when the request's answer must have started: its arrival
// plus routing.timeouts.request; zero when there is no limit. It bounds
// the time spent choosing and failing over, never a started answer, so a
// coding agent's long stream runs on.
func (r *request) deadline() time.Time {
	d := r.snap.Routing.Timeouts.Request.D()
	if d <= 0 {
		return time.Time{}
	}
	return r.start.Add(d)
}

// outOfTime reports whether the request's deadline has passed: no new
// attempt may start.
func (r *request) outOfTime(now time.Time) bool {
	dl := r.deadline()
	return !dl.IsZero() && !now.Before(dl)
}

// mayAttempt reports whether another upstream attempt may start now:
// routing.max_attempts is not spent and the deadline has not passed.
func (r *request) mayAttempt(now time.Time) bool {
	return r.attempts < max(r.snap.Routing.MaxAttempts, 1) && !r.outOfTime(now)
}

// firstByteWait is how long an attempt starting now may wait for its
// first byte, and the cause that ends the wait: routing.timeouts.first_byte,
// or what is left before the request's deadline when that is sooner.
func (r *request) firstByteWait(now time.Time) (time.Duration, error) {
	fb := r.snap.Routing.Timeouts.FirstByte.D()
	dl := r.deadline()
	if dl.IsZero() {
		return fb, errFirstByteTimeout
	}
	left := max(dl.Sub(now), time.Nanosecond) // 0 would mean no timer at all
	if fb <= 0 || left < fb {
		return left, errRequestDeadline
	}
	return fb, errFirstByteTimeout
}

// ranOutOfTime reports whether a failed attempt failed because the
// request's deadline cut its wait, not because of the route.
func (r *request) ranOutOfTime(res attemptResult, now time.Time) bool {
	return res.outcome.Kind == failure.KindTimeout && r.outOfTime(now)
}

// deadlineError is the answer when the deadline passed before any answer
// started: 504 in the client's shape, naming the channels of the attempts
// made, in order (their URLs and keys stay in the log row).
func (r *request) deadlineError(last *attemptResult) *clientError {
	tried := r.rec.channelsTried()
	msg := fmt.Sprintf("no upstream answer for model %q started within routing.timeouts.request (%s) after %d attempt(s)",
		r.model, r.snap.Routing.Timeouts.Request, r.attempts)
	if len(tried) > 0 {
		msg += " (channels " + strings.Join(tried, ", ") + ")"
	}
	if last != nil && last.outcome.Message != "" {
		msg += "; last failure: " + last.outcome.Message
	}
	return &clientError{Status: 504, Msg: msg}
}
