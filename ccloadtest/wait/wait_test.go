package wait

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestEventuallySeesTheCondition(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	Eventually(t, 5*time.Second, "three increments", func() bool { return n.Load() == 3 })
}

func TestUntilTimesOut(t *testing.T) {
	start := time.Now()
	calls := 0
	if Until(30*time.Millisecond, func() bool { calls++; return false }) {
		t.Fatal("a condition that never holds was reported as held")
	}
	if time.Since(start) < 30*time.Millisecond || calls < 2 {
		t.Fatalf("gave up after %s and %d checks", time.Since(start), calls)
	}
}

// fakeT records Fatalf instead of stopping the test.
type fakeT struct {
	testing.TB
	failed string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = format
}

func TestEventuallyFails(t *testing.T) {
	f := &fakeT{TB: t}
	Eventually(f, 5*time.Millisecond, "nothing", func() bool { return false })
	if f.failed == "" {
		t.Fatal("Eventually did not fail on a condition that never held")
	}
}
