package engine

import (
	"context"
	"sync"
	"time"
)

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
