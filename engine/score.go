package engine

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccload/ccload/config"
)

// outcomes counts a channel's upstream successes and failures in one-minute
// buckets, for the health score. Buckets older than the window are ignored.
type outcomes struct {
	mu      sync.Mutex
	minute  [120]int64 // unix minute each bucket belongs to
	ok, bad [120]int32
}

const maxWindowMinutes = 120

func (o *outcomes) add(now time.Time, failed bool) {
	m := now.Unix() / 60
	i := m % maxWindowMinutes
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

// rate returns the failure rate and the number of samples in the window.
func (o *outcomes) rate(now time.Time, window time.Duration) (float64, int) {
	m := now.Unix() / 60
	span := int64(max(min(window/time.Minute, maxWindowMinutes), 1))
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

// effectivePriority applies routing.health_score (docs/routing.md, "Health score"):
//
//	priority − failure_rate × penalty × min(1, samples / min_samples)
//
// so a channel failing half of 40 requests with penalty 100 and
// min_samples 20 drops by 50, while one with 2 failures out of 4 samples
// drops by only 10: few samples are weak evidence.
func (e *Engine) effectivePriority(ch *config.Channel, hs config.HealthScore, now time.Time) float64 {
	p := float64(ch.Priority)
	if !hs.Enabled || hs.Penalty == 0 {
		return p
	}
	rate, n := e.reg.health.get(ch.Name).rate(now, hs.Window.D())
	if n == 0 {
		return p
	}
	confidence := 1.0
	if hs.MinSamples > 0 {
		confidence = math.Min(1, float64(n)/float64(hs.MinSamples))
	}
	return p - rate*hs.Penalty*confidence
}

type healths struct{ m stateMap[string, *outcomes] }

func (h *healths) get(name string) *outcomes {
	return h.m.get(name, func() *outcomes { return &outcomes{} })
}

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
