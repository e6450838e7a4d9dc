package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/store"
)

func openTestStore(tb testing.TB) store.Store {
	tb.Helper()
	st, err := store.Open(context.Background(), "sqlite", filepath.Join(tb.TempDir(), "stats.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// randomRows returns n rows stamped between now-from and now+ahead, with
// float costs whose sum depends on the order of addition.
func randomRows(r *rand.Rand, now time.Time, n int, from, ahead time.Duration) []store.LogRow {
	names := func(p string, k int) string {
		if r.IntN(10) == 0 {
			return ""
		}
		return fmt.Sprintf("%s%d", p, r.IntN(k))
	}
	statuses := []int{200, 200, 200, 201, 0, 429, 500, 503, 404, 302}
	rows := make([]store.LogRow, n)
	for i := range rows {
		span := from + ahead
		rows[i] = store.LogRow{
			Time:         now.Add(-from + time.Duration(r.Int64N(int64(span)))).Truncate(time.Millisecond),
			RequestID:    fmt.Sprintf("r%d", r.Int64()),
			Token:        names("tok", 5),
			Channel:      names("ch", 14),
			Model:        names("m", 12),
			Status:       statuses[r.IntN(len(statuses))],
			TTFBMs:       int64(r.IntN(3) * r.IntN(5000)),
			DurationMs:   int64(r.IntN(60000)),
			InputTokens:  int64(r.IntN(100000)),
			OutputTokens: int64(r.IntN(5000)),
			Cost:         r.Float64() * 0.37,
		}
	}
	return rows
}

func resultJSON(t testing.TB, acc *series, until time.Time) string {
	t.Helper()
	b, err := json.Marshal(acc.result(until))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStatsCacheMatchesUncached: over random data, with rows arriving
// between calls (also stamped in the past and the future), the window
// sliding, the clock jumping and rows being pruned, the cached path gives
// exactly the JSON of one uncached read.
func TestStatsCacheMatchesUncached(t *testing.T) {
	st := openTestStore(t)
	clk := clock.NewFake(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))
	s := &Server{st: st, clock: clk}
	r := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	keys := []statsKey{{24 * time.Hour, 5 * time.Minute}, {time.Hour, time.Minute}, {3 * time.Hour, 15 * time.Minute},
		{48 * time.Hour, time.Hour}, {2 * time.Hour, time.Minute}}
	for step := range 50 {
		now := clk.Now().UTC()
		if err := st.InsertLogs(ctx, randomRows(r, now, r.IntN(200), 30*time.Hour, 20*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if step%17 == 16 { // prune inside some windows: the digest must notice
			if _, err := st.PruneLogs(ctx, now.Add(-time.Duration(r.IntN(30))*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		for _, k := range keys[:1+r.IntN(len(keys))] {
			since, until, n := statsWindow(now, k.rng, k.size)
			got, err := s.statsSeries(ctx, k.rng, k.size, since, until, n, now)
			if err != nil {
				t.Fatal(err)
			}
			want, err := uncachedSeries(ctx, st, since, until, k.size, n, nil)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := resultJSON(t, got, until), resultJSON(t, want, until); g != w {
				t.Fatalf("step %d %v: cached JSON differs\n got %s\nwant %s", step, k, g, w)
			}
		}
		switch r.IntN(6) {
		case 0: // same instant again
		case 1:
			clk.Advance(time.Duration(r.IntN(6)) * time.Hour) // a big jump
		default:
			clk.Advance(time.Duration(r.Int64N(int64(40 * time.Minute))))
		}
	}
	if n := len(s.statsCache.m); n > statsCacheKeys {
		t.Fatalf("%d cache entries, bound %d", n, statsCacheKeys)
	}
}

// TestStatsCacheConcurrent: concurrent calls for the same and different
// keys while rows arrive (run with -race) all succeed, and afterwards the
// cache agrees with an uncached read.
func TestStatsCacheConcurrent(t *testing.T) {
	st := openTestStore(t)
	clk := clock.NewFake(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))
	s := &Server{st: st, clock: clk}
	ctx := context.Background()
	keys := []statsKey{{24 * time.Hour, 5 * time.Minute}, {time.Hour, time.Minute}}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for range 25 {
				now := clk.Now().UTC()
				if g%2 == 0 {
					if err := st.InsertLogs(ctx, randomRows(r, now, 20, 25*time.Hour, time.Minute)); err != nil {
						t.Error(err)
						return
					}
					clk.Advance(time.Minute)
				}
				k := keys[r.IntN(len(keys))]
				since, until, n := statsWindow(now, k.rng, k.size)
				if _, err := s.statsSeries(ctx, k.rng, k.size, since, until, n, now); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	now := clk.Now().UTC()
	for _, k := range keys {
		since, until, n := statsWindow(now, k.rng, k.size)
		got, err := s.statsSeries(ctx, k.rng, k.size, since, until, n, now)
		if err != nil {
			t.Fatal(err)
		}
		want, err := uncachedSeries(ctx, st, since, until, k.size, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resultJSON(t, got, until) != resultJSON(t, want, until) {
			t.Fatalf("%v: cached JSON differs after concurrent use", k)
		}
	}
}

// BenchmarkStats24h: 100 000 SQLite rows in the last 24 h, range=24h,
// bucket=5m; "uncached" is today's read, "cached" a warm call of the cache
// (with and without a few new rows since the previous call).
func BenchmarkStats24h(b *testing.B) {
	st := openTestStore(b)
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	clk := clock.NewFake(now)
	r := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	for range 100 {
		if err := st.InsertLogs(ctx, randomRows(r, now, 1000, 24*time.Hour, 0)); err != nil {
			b.Fatal(err)
		}
	}
	rng, size := 24*time.Hour, 5*time.Minute
	since, until, n := statsWindow(now, rng, size)
	b.Run("uncached", func(b *testing.B) {
		for b.Loop() {
			acc, err := uncachedSeries(ctx, st, since, until, size, n, nil)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = json.Marshal(acc.result(until))
		}
	})
	b.Run("cached_warm", func(b *testing.B) {
		s := &Server{st: st, clock: clk}
		if _, err := s.statsSeries(ctx, rng, size, since, until, n, now); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			acc, err := s.statsSeries(ctx, rng, size, since, until, n, now)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = json.Marshal(acc.result(until))
		}
	})
	b.Run("cached_warm_10_new_rows", func(b *testing.B) {
		s := &Server{st: st, clock: clk}
		if _, err := s.statsSeries(ctx, rng, size, since, until, n, now); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			b.StopTimer()
			if err := st.InsertLogs(ctx, randomRows(r, now, 10, time.Hour, 0)); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			acc, err := s.statsSeries(ctx, rng, size, since, until, n, now)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = json.Marshal(acc.result(until))
		}
	})
}
