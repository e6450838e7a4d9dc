package admin

import (
	"testing"
	"time"
	"unsafe"

	"github.com/ccload/ccload/store"
)

// TestCachedPointRoundTrip: a point survives the cache's compact form,
// with durations and statuses out of its range clamped, not wrapped.
func TestCachedPointRoundTrip(t *testing.T) {
	if s := unsafe.Sizeof(cachedPoint{}); s > 80 {
		t.Errorf("cachedPoint is %d bytes, want at most 80", s)
	}
	n := newNames()
	p := store.LogPoint{ID: 42, Time: time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC), Token: "t", Channel: "c", Model: "m",
		Status: 429, TTFBMs: 1500, DurationMs: 90_000, InputTokens: 1 << 40, OutputTokens: 7, CacheReadTokens: 3, CacheWriteTokens: 4, Cost: 0.125}
	if got := compact(p, n).point(n); got != p {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, p)
	}
	q := compact(store.LogPoint{Time: p.Time, Token: "t", Channel: "c2", Model: "m", TTFBMs: 1 << 40, Status: 1 << 20}, n)
	if q.ttfb != 1<<31-1 || q.status != 1<<15-1 || len(n.list) != 4 {
		t.Errorf("clamped point %+v, names %v", q, n.list)
	}
}
