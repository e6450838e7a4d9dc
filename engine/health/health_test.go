package health

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 30, 0, time.UTC)

// TestOutcomesRateOverItsWindow: the rate counts the whole minutes of the
// window ending now, and outcomes older than it drop out.
func TestOutcomesRateOverItsWindow(t *testing.T) {
	var o Outcomes
	if rate, n := o.Rate(t0, 5*time.Minute); rate != 0 || n != 0 {
		t.Fatalf("empty: rate %v over %d, want 0 over 0", rate, n)
	}
	for i := range 4 {
		o.Add(t0, i == 0) // 1 failure of 4, now
	}
	o.Add(t0.Add(-10*time.Minute), true) // 1 failure, ten minutes ago
	if rate, n := o.Rate(t0, 5*time.Minute); rate != 0.25 || n != 4 {
		t.Fatalf("5-minute window: rate %v over %d, want 0.25 over 4", rate, n)
	}
	if rate, n := o.Rate(t0, 15*time.Minute); rate != 0.4 || n != 5 {
		t.Fatalf("15-minute window: rate %v over %d, want 0.4 over 5", rate, n)
	}
	if _, n := o.Rate(t0, 30*time.Second); n != 4 {
		t.Fatalf("a window under a minute counts the current minute: %d samples, want 4", n)
	}
	if _, n := o.Rate(t0.Add(time.Hour), 5*time.Minute); n != 0 {
		t.Fatalf("an hour later: %d samples in a 5-minute window, want 0", n)
	}
}

// TestOutcomesReuseABucketOfAnOldMinute: the ring wraps; a bucket reused
// for a later minute forgets what it counted before.
func TestOutcomesReuseABucketOfAnOldMinute(t *testing.T) {
	var o Outcomes
	o.Add(t0, true)
	later := t0.Add(windowMinutes * time.Minute) // the same bucket
	o.Add(later, false)
	if rate, n := o.Rate(later, windowMinutes*time.Minute); rate != 0 || n != 1 {
		t.Fatalf("rate %v over %d, want 0 over 1 (the old failure is gone)", rate, n)
	}
	if _, n := o.Rate(later, 24*time.Hour); n != 1 {
		t.Fatalf("a window longer than the ring counts %d, want 1", n)
	}
}

// TestLoadAdmitsUnderBothLimits: a slot is taken under max_concurrency and
// rpm_limit; a refusal names its limit and holds nothing.
func TestLoadAdmitsUnderBothLimits(t *testing.T) {
	var l Load
	if got := l.Admit(t0, 0, 2); got != "" {
		t.Fatalf("first slot refused: %q", got)
	}
	if got := l.Admit(t0, 0, 2); got != "" {
		t.Fatalf("second slot refused: %q", got)
	}
	if got := l.Admit(t0, 0, 2); got != "max_concurrency" {
		t.Fatalf("third slot of 2: %q, want max_concurrency", got)
	}
	if l.InFlight() != 2 || l.RPM(t0) != 2 {
		t.Fatalf("after a refusal: %d in flight, rpm %d; want 2 and 2", l.InFlight(), l.RPM(t0))
	}
	l.Release()
	if got := l.Admit(t0, 3, 2); got != "" {
		t.Fatalf("a released slot is taken again: %q", got)
	}
	l.Release()
	if got := l.Admit(t0, 3, 0); got != "rpm_limit" {
		t.Fatalf("fourth request of 3 a minute: %q, want rpm_limit", got)
	}
	if l.InFlight() != 1 || l.RPM(t0) != 3 {
		t.Fatalf("after the rpm refusal: %d in flight, rpm %d; want 1 and 3", l.InFlight(), l.RPM(t0))
	}
}

// TestLoadRPMIsTheLastSixtySeconds: requests leave the RPM count 60
// seconds after they started, to the second.
func TestLoadRPMIsTheLastSixtySeconds(t *testing.T) {
	var l Load
	l.Admit(t0, 0, 0)
	l.Admit(t0.Add(30*time.Second), 0, 0)
	for _, c := range []struct {
		after time.Duration
		want  int
	}{{59 * time.Second, 2}, {60 * time.Second, 1}, {89 * time.Second, 1}, {90 * time.Second, 0}} {
		if got := l.RPM(t0.Add(c.after)); got != c.want {
			t.Errorf("rpm %s after the first request: %d, want %d", c.after, got, c.want)
		}
	}
	if got := l.Admit(t0.Add(60*time.Second), 2, 0); got != "" {
		t.Fatalf("the first request's bucket is reused a minute later: %q", got)
	}
	if got := l.RPM(t0.Add(60 * time.Second)); got != 2 {
		t.Fatalf("rpm after the reuse: %d, want 2", got)
	}
}
