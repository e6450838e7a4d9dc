package engine

import (
	"math"
	"sync"
	"sync/atomic"

	"ccload/config"
)

// state is the runtime state that outlives config snapshots: round-robin
// positions and URL latency. It is keyed by identity (channel name, URL
// string), so a reload that keeps a channel keeps its state; entries of
// channels that disappeared are dropped by sweepRuntime.
type state struct {
	mu   sync.Mutex
	wrr  map[string]map[string]int // candidate-set key -> channel -> current weight
	keys sync.Map                  // channel name -> *atomic.Uint64 (key cursor)
	urls sync.Map                  // channel+"\x00"+url -> *urlStat
	// keyIDs caches keyID by key value: it is on every routing decision.
	keyIDs sync.Map
}

// keyID is keyID(k), computed once per key.
func (s *state) keyID(k config.Secret) string {
	raw := k.Reveal()
	if v, ok := s.keyIDs.Load(raw); ok {
		return v.(string)
	}
	id := keyID(k)
	s.keyIDs.Store(raw, id)
	return id
}

func newState() *state {
	return &state{wrr: map[string]map[string]int{}}
}

// urlStat is the EWMA of one URL's time to first byte.
type urlStat struct {
	mu      sync.Mutex
	ewmaMs  float64
	samples int
}

const ewmaAlpha = 0.3

func (s *state) urlStat(channel, url string) *urlStat {
	k := channel + "\x00" + url
	if v, ok := s.urls.Load(k); ok {
		return v.(*urlStat)
	}
	v, _ := s.urls.LoadOrStore(k, &urlStat{})
	return v.(*urlStat)
}

// observeURL records a latency sample for a URL.
func (s *state) observeURL(channel, url string, ms float64) {
	u := s.urlStat(channel, url)
	u.mu.Lock()
	if u.samples == 0 {
		u.ewmaMs = ms
	} else {
		u.ewmaMs = ewmaAlpha*ms + (1-ewmaAlpha)*u.ewmaMs
	}
	u.samples++
	u.mu.Unlock()
}

// urlLatency returns the EWMA (ms) and whether the URL was ever visited.
func (s *state) urlLatency(channel, url string) (float64, bool) {
	u := s.urlStat(channel, url)
	u.mu.Lock()
	defer u.mu.Unlock()
	return math.Max(u.ewmaMs, 1), u.samples > 0
}

// keyCursor returns the next round-robin start position for a channel.
func (s *state) keyCursor(channel string) uint64 {
	v, ok := s.keys.Load(channel)
	if !ok {
		v, _ = s.keys.LoadOrStore(channel, new(atomic.Uint64))
	}
	return v.(*atomic.Uint64).Add(1) - 1
}

// smoothWRR picks one member of a candidate set by smooth weighted
// round-robin (the nginx algorithm: every member gains its weight, the
// largest current weight wins and loses the total). The sequence for
// weights 5,1,1 is a a b a c a a, spreading picks instead of bursting.
// It returns the index of the winner in names.
func (s *state) smoothWRR(set string, names []string, weights []int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.wrr[set]
	if cur == nil {
		cur = make(map[string]int, len(names))
		s.wrr[set] = cur
	}
	best, total := -1, 0
	for i, n := range names {
		cur[n] += weights[i]
		total += weights[i]
		if best < 0 || cur[n] > cur[names[best]] {
			best = i
		}
	}
	cur[names[best]] -= total
	return best
}
