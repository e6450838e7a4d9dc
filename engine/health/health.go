// Package health holds the two counters the engine keeps for a channel or
// a token: Outcomes, its upstream failure rate over the last minutes (the
// health score lowers a channel's priority by it), and Load, its requests
// in flight and started in the last minute (what max_concurrency and
// rpm_limit are checked against).
//
// Both are safe for concurrent use, read no clock (the caller passes the
// time), and allocate nothing per request: they are fixed rings of
// buckets, each stamped with the minute or second it counts.
package health

import (
	"sync"
	"sync/atomic"
	"time"
)

// windowMinutes is the longest failure-rate window Outcomes keeps.
const windowMinutes = 120

// Outcomes counts a channel's upstream successes and failures in one-minute
// buckets. Buckets older than the window asked for are ignored. The zero
// value is ready to use.
type Outcomes struct {
	mu      sync.Mutex
	minute  [windowMinutes]int64 // unix minute each bucket belongs to
	ok, bad [windowMinutes]int32
}

// Add counts one outcome at now.
func (o *Outcomes) Add(now time.Time, failed bool) {
	m := now.Unix() / 60
	i := m % windowMinutes
	o.mu.Lock()
	if o.minute[i] != m {
		o.minute[i], o.ok[i], o.bad[i] = m, 0, 0
	}
	if failed {
		o.bad[i]++
	} else {
		o.ok[i]++
	}
	o.mu.Unlock()
}

// Rate returns the failure rate and the number of outcomes in the window
// ending at now: whole minutes, at least one and at most 120. With no
// outcomes it returns 0, 0.
func (o *Outcomes) Rate(now time.Time, window time.Duration) (rate float64, samples int) {
	m := now.Unix() / 60
	span := int64(max(min(window/time.Minute, windowMinutes), 1))
	o.mu.Lock()
	defer o.mu.Unlock()
	var ok, bad int
	for i := range o.minute {
		if m-o.minute[i] < span {
			ok += int(o.ok[i])
			bad += int(o.bad[i])
		}
	}
	n := ok + bad
	if n == 0 {
		return 0, 0
	}
	return float64(bad) / float64(n), n
}

// Load counts one entity's requests: in flight now and started in the
// last 60 seconds (a ring of one-second buckets, so RPM is exact to a
// second). The zero value is ready to use.
type Load struct {
	inflight atomic.Int64

	mu      sync.Mutex
	buckets [60]int32
	stamps  [60]int64 // unix second each bucket belongs to
}

// InFlight is the number of slots taken and not released.
func (l *Load) InFlight() int64 { return l.inflight.Load() }

// RPM is the number of requests admitted in the 60 seconds up to now.
func (l *Load) RPM(now time.Time) int {
	sec := now.Unix()
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for i := range l.buckets {
		if sec-l.stamps[i] < 60 {
			n += int(l.buckets[i])
		}
	}
	return n
}

// Admit takes a slot if the entity is under both limits (0 = no limit).
// It returns "" on success (the caller must then call Release) or the name
// of the limit that refused, as the config file names it
// ("max_concurrency", "rpm_limit"); then no slot is held and nothing is
// counted.
func (l *Load) Admit(now time.Time, rpmLimit, maxConcurrency int) string {
	if maxConcurrency > 0 {
		if l.inflight.Add(1) > int64(maxConcurrency) {
			l.inflight.Add(-1)
			return "max_concurrency"
		}
	} else {
		l.inflight.Add(1)
	}
	if rpmLimit > 0 && l.RPM(now) >= rpmLimit {
		l.inflight.Add(-1)
		return "rpm_limit"
	}
	sec := now.Unix()
	i := sec % 60
	l.mu.Lock()
	if l.stamps[i] != sec {
		l.stamps[i], l.buckets[i] = sec, 0
	}
	l.buckets[i]++
	l.mu.Unlock()
	return ""
}

// Release gives back a slot Admit took.
func (l *Load) Release() { l.inflight.Add(-1) }
