// Package clock is the one time source of ccload: the engine, the cooldown
// registry and the admin server read the time only through a Clock, so a
// test can hold time still or move it by hand instead of sleeping.
package clock

import (
	"sync"
	"time"
)

// Clock is the time source.
type Clock interface{ Now() time.Time }

// Wall is the system clock; a nil Clock in an Options struct means Wall.
type Wall struct{}

// Now is time.Now.
func (Wall) Now() time.Time { return time.Now() }

// Fake is a clock that moves only when told to; safe for concurrent use.
type Fake struct {
	mu     sync.Mutex
	t      time.Time
	timers []*fakeTimer // pending AfterFunc calls (timer.go)
}

// NewFake returns a Fake stopped at t.
func NewFake(t time.Time) *Fake { return &Fake{t: t} }

// Now is the time the clock was set to.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d and starts the AfterFunc calls
// that became due.
func (c *Fake) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	due := c.dueLocked()
	c.mu.Unlock()
	for _, f := range due {
		go f()
	}
}
