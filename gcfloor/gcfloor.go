// Package gcfloor keeps the garbage collector's heap goal from falling
// below a floor.
//
// With GOGC=100 the collector runs each time the heap has grown by as much
// as was live after the last cycle. A gateway's live heap is small (a few
// MB between requests) while every request allocates, so at thousands of
// requests a second it collected many times a second. On the load
// benchmark (issue 12), a live heap 4 MB smaller (the log queue's old
// channel) cost 17% more CPU per request, and a 16 MiB floor took 22% off
// it (0.14 -> 0.11 CPU-ms per non-stream request) for 9-11 MiB more RSS.
// Raising GOGC for good would multiply the heap of a gateway holding
// 10,000 streams as well. Instead, after each collection the percent is
// set so that the next goal is the floor while the live heap is well below
// it, and back to GOGC's value once the heap is large: small heaps collect
// less often, large ones as before (1000 open streams: same RSS).
package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Serve is the floor `ccload serve` keeps, and its benchmarks with it.
const Serve = 16 << 20

// runtimeMinimum is the runtime's smallest heap goal at GOGC=100. It
// scales with GOGC, so the percent is capped where it would pass floor.
const runtimeMinimum = 4 << 20

// Start keeps the heap goal at floor bytes or more until stop is called,
// which gives GOGC back its value at Start. It does nothing when GOGC is
// set in the environment (the operator chose) or collection is off.
func Start(floor uint64) (stop func()) {
	if os.Getenv("GOGC") != "" || floor == 0 {
		return func() {}
	}
	t := &tuner{floor: floor, sample: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"},
	}}
	t.base = debug.SetGCPercent(100)
	debug.SetGCPercent(t.base)
	if t.base < 0 {
		return func() {} // collection is off: nothing to tune
	}
	t.arm()
	t.tune() // before the first cycle too
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if !t.stopped {
			t.stopped = true
			debug.SetGCPercent(t.base)
		}
	}
}

type tuner struct {
	floor uint64
	base  int // GOGC at Start

	mu      sync.Mutex
	stopped bool
	sample  []metrics.Sample
}

// sentinel is garbage as soon as it is made; its finalizer runs once the
// cycle that found it unreachable is over, and arms the next one. It holds
// a pointer so that it is not batched by the tiny allocator, whose objects
// may never be finalized.
type sentinel struct {
	t *tuner
	_ [8]byte
}

func (t *tuner) arm() {
	runtime.SetFinalizer(&sentinel{t: t}, func(s *sentinel) {
		if s.t.tune() {
			s.t.arm()
		}
	})
}

// tune sets the percent for the next cycle from the heap the last one
// left live. It reports false once stopped.
func (t *tuner) tune() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	metrics.Read(t.sample)
	var v [3]uint64
	for i, s := range t.sample {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	debug.SetGCPercent(Percent(v[0], v[1]+v[2], t.floor, t.base))
	return true
}

// Percent is the GOGC that makes the next heap goal reach floor, and
// never less than base. The runtime sets the goal to live + (live + roots)
// * GOGC/100, where roots are the stacks and globals it scans, and never
// below 4 MB * GOGC/100: the percent stays under the one that would lift
// that minimum past floor (before the first cycle, with nothing live, it
// is all that would count).
func Percent(live, roots, floor uint64, base int) int {
	if live == 0 || live >= floor {
		return base
	}
	p := int((floor - live) * 100 / (live + roots))
	ceiling := int(floor * 100 / runtimeMinimum)
	return min(max(p, base), max(base, ceiling))
}
