package clock

import "time"

type fakeTimer struct {
	at time.Time
	f  func()
}

// AfterFunc calls f in its own goroutine once the clock has been advanced
// by d or more, unless stop is called first; stop reports whether it
// stopped the call. It is the fake's side of the engine's TimerClock.
func (c *Fake) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	t := &fakeTimer{f: f}
	c.mu.Lock()
	t.at = c.t.Add(d)
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, x := range c.timers {
			if x == t {
				c.timers = append(c.timers[:i], c.timers[i+1:]...)
				return true
			}
		}
		return false
	}
}

// Timers is the number of AfterFunc calls not yet due nor stopped, so a
// test can wait until the code under test has armed its timer.
func (c *Fake) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// dueLocked removes and returns the calls whose time has come.
func (c *Fake) dueLocked() []func() {
	var due []func()
	kept := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(c.t) {
			kept = append(kept, t)
		} else {
			due = append(due, t.f)
		}
	}
	c.timers = kept
	return due
}
