// Package gcfloor keeps the garbage collector's heap goal from falling
// below a floor.
//
// With GOGC=100 the collector runs each time the heap has grown by as much
// as was live after the last cycle. A gateway's live heap is small (a few
// MB between requests) while every request allocates, so at thousands of
// requests a second it collected many times a second. On the load
// benchmark, a live heap 4 MB smaller (the log queue's old
// channel) cost 17% more CPU per request, and a 16 MiB floor took 22% off
// it (0.14 -> 0.11 CPU-ms per non-stream request) for 9-11 MiB more RSS.
// Raising GOGC for good would multiply the heap of a gateway holding
// 10,000 streams as well. Instead, after each collection the percent is
// set so that the next goal is the floor while the live heap is well below
// it, and a lower percent once the heap is large: small heaps collect
// less often, and a heap made of open streams grows by half, not all, of
// what it holds (stacks included, which the runtime counts) before the
// next cycle.
package gcfloor

import (
	"cmp"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Policy is the heap goal kept after each collection.
type Policy struct {
	// Floor is the smallest goal, in bytes.
	Floor uint64
	// Above is the percent (as GOGC) once the live heap reaches the floor;
	// 0 keeps GOGC's value at Start.
	Above int
}

// Serve is the policy of `ccload serve`, and of its benchmarks. Above the
// floor, 50 rather than GOGC's 100: with 1000 streams open the live heap
// is ~24 MB and the stacks ~10 MB, so at 100 the goal was ~58 MB and the
// garbage of 1000 streams ending at once (their log rows, the batch
// inserts) lifted RSS 4-6 MiB past what the open streams held; GOGC=50
// measured 64.6 against 65.5 MiB at the peak and 38.9 against 41.3 KiB
// per stream. The cost is a collection twice as often while many streams
// are open, each marking what they hold.
var Serve = Policy{Floor: 16 << 20, Above: 50}

// runtimeMinimum is the runtime's smallest heap goal at GOGC=100. It
// scales with GOGC, so the percent is capped where it would pass floor.
const runtimeMinimum = 4 << 20

// Start keeps the heap goal at p.Floor bytes or more, and sets p.Above once
// the live heap is past it, until stop is called, which gives GOGC back its
// value at Start. It does nothing when GOGC is set in the environment (the
// operator chose) or collection is off.
func Start(p Policy) (stop func()) {
	if os.Getenv("GOGC") != "" || p.Floor == 0 {
		return func() {}
	}
	t := &tuner{floor: p.Floor, sample: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"},
	}}
	t.base = debug.SetGCPercent(100)
	debug.SetGCPercent(t.base)
	if t.base < 0 {
		return func() {} // collection is off: nothing to tune
	}
	t.above = cmp.Or(p.Above, t.base)
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
	above int // percent once the live heap reaches floor

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
	debug.SetGCPercent(Percent(v[0], v[1]+v[2], t.floor, t.above))
	return true
}

// Percent is the GOGC that makes the next heap goal reach floor, and
// never less than above, which is what it is once live reaches floor. The
// runtime sets the goal to live + (live + roots) * GOGC/100, where roots
// are the stacks and globals it scans, and never below 4 MB * GOGC/100:
// the percent stays under the one that would lift that minimum past floor
// (before the first cycle, with nothing live, it is all that would count).
func Percent(live, roots, floor uint64, above int) int {
	if live == 0 || live >= floor {
		return above
	}
	p := int((floor - live) * 100 / (live + roots))
	ceiling := int(floor * 100 / runtimeMinimum)
	return min(max(p, above), max(above, ceiling))
}
