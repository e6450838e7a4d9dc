package engine

import (
	"sync"
	"sync/atomic"
	"time"
)

// load counts one entity's requests: in flight now and started in the last
// 60 seconds (a ring of one-second buckets, so RPM is exact to a second and
// costs no allocation per request).
type load struct {
	inflight atomic.Int64

	mu      sync.Mutex
	buckets [60]int32
	stamps  [60]int64 // unix second each bucket belongs to
}

// rpm is the number of requests started in the last 60 seconds.
func (l *load) rpm(now time.Time) int {
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

// admit takes a slot if the entity is under both limits (0 = no limit).
// It returns "" on success (the caller must then call release) or the name
// of the limit that refused.
func (l *load) admit(now time.Time, rpmLimit, maxConcurrency int) string {
	if maxConcurrency > 0 {
		if l.inflight.Add(1) > int64(maxConcurrency) {
			l.inflight.Add(-1)
			return "max_concurrency"
		}
	} else {
		l.inflight.Add(1)
	}
	if rpmLimit > 0 && l.rpm(now) >= rpmLimit {
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

func (l *load) release() { l.inflight.Add(-1) }

// loads holds the load of every channel and token by name, so counts
// survive config reloads like the rest of the runtime state.
type loads struct{ m stateMap[string, *load] }

func (ls *loads) get(name string) *load {
	return ls.m.get(name, func() *load { return &load{} })
}
