package admin

import (
	"testing"
	"time"

	"github.com/ccload/ccload/store"
)

func TestPercentiles(t *testing.T) {
	v := make([]int64, 0, 100)
	for i := 100; i >= 1; i-- {
		v = append(v, int64(i))
	}
	if p50, p95 := percentiles(v); p50 != 50 || p95 != 95 {
		t.Fatalf("1..100: p50 %d p95 %d", p50, p95)
	}
	if p50, p95 := percentiles([]int64{7}); p50 != 7 || p95 != 7 {
		t.Fatalf("one value: %d %d", p50, p95)
	}
	if p50, p95 := percentiles(nil); p50 != 0 || p95 != 0 {
		t.Fatalf("none: %d %d", p50, p95)
	}
}

// TestSeriesBuckets: points land in the bucket their start time falls in
// (start inclusive), errors and TTFBs are counted where they belong, and
// rankings order by cost, then requests.
func TestSeriesBuckets(t *testing.T) {
	since := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	s := newSeries(since, time.Minute, 3)
	pts := []store.LogPoint{
		{Time: since, Model: "a", Channel: "x", Token: "t", Status: 200, TTFBMs: 100, InputTokens: 10, Cost: 0.5},
		{Time: since.Add(59 * time.Second), Model: "a", Channel: "x", Token: "t", Status: 500},
		{Time: since.Add(time.Minute), Model: "b", Channel: "y", Token: "t", Status: 200, TTFBMs: 300, Cost: 2},
		{Time: since.Add(2*time.Minute + time.Second), Model: "b", Channel: "y", Token: "u", Status: 429},
		{Time: since.Add(3 * time.Minute), Model: "c", Status: 200}, // past the last bucket: ignored
	}
	for _, p := range pts {
		s.add(p)
	}
	r := s.result(since.Add(3 * time.Minute))
	want := []struct{ req, errs int64 }{{2, 1}, {1, 0}, {1, 1}}
	for i, w := range want {
		b := r.Buckets[i]
		if b.Requests != w.req || b.Errors != w.errs || !b.Start.Equal(since.Add(time.Duration(i)*time.Minute)) {
			t.Errorf("bucket %d = %+v, want %d requests %d errors", i, b, w.req, w.errs)
		}
	}
	if r.Buckets[0].TTFBp50ms != 100 || r.Buckets[1].TTFBp95ms != 300 || r.Buckets[2].TTFBp50ms != 0 {
		t.Errorf("ttfb: %+v", r.Buckets)
	}
	if r.Total.Requests != 4 || r.Total.Errors != 2 || r.Total.Cost != 2.5 || r.Total.InputTokens != 10 {
		t.Errorf("total %+v", r.Total)
	}
	if m := r.Top.Models; len(m) != 2 || m[0].Name != "b" || m[1].Name != "a" || m[1].Requests != 2 {
		t.Errorf("top models %+v", m)
	}
	if tk := r.Top.Tokens; len(tk) != 2 || tk[0].Name != "t" || tk[0].Requests != 3 || tk[1].Name != "u" {
		t.Errorf("top tokens %+v", tk)
	}
}

// TestSeriesCacheHitRate: cache reads over input tokens per bucket, total
// and ranking, and the saving priced per model.
func TestSeriesCacheHitRate(t *testing.T) {
	since := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	s := newSeries(since, time.Minute, 2)
	s.saved = func(model string, n int64) float64 {
		if model != "claude" {
			return 0 // unpriced
		}
		return float64(n) * (3 - 0.3) / 1e6
	}
	for _, p := range []store.LogPoint{
		{Time: since, Model: "claude", Channel: "x", Token: "t", Status: 200, InputTokens: 100_000, CacheReadTokens: 90_000},
		{Time: since.Add(time.Minute), Model: "claude", Channel: "y", Token: "t", Status: 200, InputTokens: 100_000},
		{Time: since.Add(time.Minute), Model: "other", Channel: "y", Token: "t", Status: 200, InputTokens: 50_000, CacheReadTokens: 25_000},
	} {
		s.add(p)
	}
	r := s.result(since.Add(2 * time.Minute))
	if got := r.Buckets[0].CacheHitRate; got != 0.9 {
		t.Errorf("bucket 0 hit rate %v, want 0.9", got)
	}
	if got, want := r.Total.CacheHitRate, 115_000.0/250_000; got != want {
		t.Errorf("total hit rate %v, want %v", got, want)
	}
	if got, want := r.Total.CacheSaved, 90_000*2.7/1e6; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("saved %v, want %v (the unpriced model saves nothing)", got, want)
	}
	for _, c := range r.Top.Channels {
		want := map[string]float64{"x": 0.9, "y": 25_000.0 / 150_000}[c.Name]
		if c.CacheHitRate != want {
			t.Errorf("channel %s hit rate %v, want %v", c.Name, c.CacheHitRate, want)
		}
	}
}
