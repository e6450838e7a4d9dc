package gcfloor_test

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/wait"
	"github.com/ccload/ccload/internal/gcfloor"
)

const mib = 1 << 20

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		live, roots, floor uint64
		above, want        int
	}{
		{0, 0, 16 * mib, 100, 100},              // no cycle yet: the runtime's minimum holds
		{20 * mib, mib, 16 * mib, 100, 100},     // above the floor: GOGC as set
		{4 * mib, mib, 16 * mib, 100, 240},      // 4 + 5*2.4 = 16
		{mib, 0, 16 * mib, 100, 400},            // capped: 4 MB * 4 = 16, the floor
		{10 * mib, 2 * mib, 16 * mib, 100, 100}, // 50 would be below GOGC
		{4 * mib, mib, 16 * mib, 300, 300},      // never below the given percent
		{20 * mib, 10 * mib, 16 * mib, 50, 50},  // above the floor: the policy's percent
		{12 * mib, 0, 16 * mib, 50, 50},         // 33 would reach the floor; 50 passes it
	} {
		if got := gcfloor.Percent(c.live, c.roots, c.floor, c.above); got != c.want {
			t.Errorf("Percent(live %d MiB, roots %d MiB, floor %d MiB, above %d) = %d, want %d",
				c.live/mib, c.roots/mib, c.floor/mib, c.above, got, c.want)
		}
	}
}

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestStartTunesAfterEachCycleAndStopRestores: with a small live heap and
// a large floor, the percent rises after a collection; stop gives GOGC
// back.
func TestStartTunesAfterEachCycleAndStopRestores(t *testing.T) {
	t.Setenv("GOGC", "")
	base := gcPercent()
	stop := gcfloor.Start(gcfloor.Policy{Floor: 256 * mib})
	// The tuner runs on the finalizer goroutine after each collection.
	if !wait.Until(5*time.Second, func() bool { runtime.GC(); return gcPercent() > base }) {
		stop()
		t.Fatalf("GOGC still %d after collections with a small heap and a 256 MiB floor", gcPercent())
	}
	stop()
	if p := gcPercent(); p != base {
		t.Fatalf("after stop GOGC is %d, want %d", p, base)
	}
	if p := percentAfterCollections(); p != base {
		t.Fatalf("a collection after stop set GOGC to %d", p)
	}
}

// TestStartSetsAboveOnceTheLiveHeapPassesTheFloor: a live heap larger
// than the floor runs at the policy's percent, not GOGC's.
func TestStartSetsAboveOnceTheLiveHeapPassesTheFloor(t *testing.T) {
	t.Setenv("GOGC", "")
	base := gcPercent()
	live := make([]byte, 8*mib)
	stop := gcfloor.Start(gcfloor.Policy{Floor: mib, Above: 37})
	p := percentAfterCollections()
	stop()
	runtime.KeepAlive(live)
	if p != 37 {
		t.Fatalf("live heap 8 MiB over a 1 MiB floor: GOGC %d, want the policy's 37", p)
	}
	if p := gcPercent(); p != base {
		t.Fatalf("after stop GOGC is %d, want %d", p, base)
	}
}

// percentAfterCollections runs a few collections, giving the finalizer
// goroutine (where the tuner runs) time after each, and returns GOGC.
func percentAfterCollections() int {
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	return gcPercent()
}

func TestStartLeavesAnOperatorsGOGC(t *testing.T) {
	t.Setenv("GOGC", "100")
	base := gcPercent()
	stop := gcfloor.Start(gcfloor.Policy{Floor: 256 * mib})
	defer stop()
	if p := percentAfterCollections(); p != base {
		t.Fatalf("GOGC=100 in the environment, yet the percent became %d", p)
	}
}

func TestStartLeavesCollectionOff(t *testing.T) {
	t.Setenv("GOGC", "")
	old := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(old)
	stop := gcfloor.Start(gcfloor.Policy{Floor: 256 * mib})
	defer stop()
	if p := percentAfterCollections(); p != -1 {
		t.Fatalf("collection was off, yet the percent became %d", p)
	}
}
