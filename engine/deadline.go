package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ccload/ccload/engine/failure"
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
