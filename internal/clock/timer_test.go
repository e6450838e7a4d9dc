package clock

import (
	"testing"
	"time"
)

func TestFakeAfterFuncFiresOnAdvance(t *testing.T) {
	c := NewFake(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	fired := make(chan string, 2)
	c.AfterFunc(time.Second, func() { fired <- "one" })
	stop := c.AfterFunc(2*time.Second, func() { fired <- "two" })
	c.Advance(999 * time.Millisecond)
	if c.Timers() != 2 {
		t.Fatalf("timers before their time: %d, want 2", c.Timers())
	}
	c.Advance(time.Millisecond)
	if got := <-fired; got != "one" {
		t.Fatalf("fired %q", got)
	}
	if !stop() || stop() {
		t.Fatal("stop must report true once, for a pending call")
	}
	c.Advance(time.Hour)
	if c.Timers() != 0 || len(fired) != 0 {
		t.Fatalf("a stopped call fired or stayed pending: %d pending, %d fired", c.Timers(), len(fired))
	}
}
