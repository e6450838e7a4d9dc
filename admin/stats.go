package admin

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/store"
)

// Stats limits: the longest range and the most buckets one call returns.
const (
	maxStatsRange   = 31 * 24 * time.Hour
	maxStatsBuckets = 2000
	topN            = 10
)

// buckets are the accepted bucket sizes.
var buckets = map[string]time.Duration{
	"1m": time.Minute, "5m": 5 * time.Minute, "15m": 15 * time.Minute, "1h": time.Hour, "1d": 24 * time.Hour,
}

// stats is GET /admin/stats?range=24h&bucket=5m: a time series of the
// requests that started in the range, plus rankings by cost. It reads the
// range's log rows with one query and buckets them here.
func (s *Server) stats(ctx *fasthttp.RequestCtx) error {
	args := ctx.QueryArgs()
	rng := 24 * time.Hour
	if v := string(args.Peek("range")); v != "" {
		d, err := config.ParseDuration(v)
		if err != nil || d.D() <= 0 || d.D() > maxStatsRange {
			return errBadRequest(`range: want a duration from "1m" to "31d", got ` + quote(v))
		}
		rng = d.D()
	}
	size := defaultBucket(rng)
	if v := string(args.Peek("bucket")); v != "" {
		var ok bool
		if size, ok = buckets[v]; !ok {
			return errBadRequest(`bucket: want 1m, 5m, 15m, 1h or 1d, got ` + quote(v))
		}
	}
	now := s.clock.Now().UTC()
	since, until, n := statsWindow(now, rng, size)
	if n > maxStatsBuckets {
		return errBadRequest("range/bucket gives too many buckets; use a larger bucket")
	}

	acc, err := s.statsSeries(detach(ctx), rng, size, since, until, n, now)
	if err != nil {
		return errInternal("reading logs failed", err)
	}
	return writeJSON(ctx, fasthttp.StatusOK, acc.result(until))
}

// warmStats folds the dashboard's default window (24 h, 5-minute buckets)
// into the cache once, in the background, at start.
func (s *Server) warmStats() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	now := s.clock.Now().UTC()
	rng, size := 24*time.Hour, 5*time.Minute
	since, until, n := statsWindow(now, rng, size)
	if _, err := s.statsSeries(ctx, rng, size, since, until, n, now); err != nil && s.log != nil {
		s.log.Warn("warming the stats cache failed; the first dashboard load reads the window", "err", err)
	}
}

// statsSeries folds the window's log points, from the cache when it can
// (see statsCache) and otherwise with one uncached read.
func (s *Server) statsSeries(ctx context.Context, rng, size time.Duration, since, until time.Time, n int, now time.Time) (*series, error) {
	e := s.statsCache.entry(statsKey{rng, size}, now)
	e.mu.Lock()
	saved := s.cacheSaving()
	acc, ok, err := e.series(ctx, s.st, since, until, size, n, saved)
	e.mu.Unlock()
	if err != nil || ok {
		return acc, err
	}
	return uncachedSeries(ctx, s.st, since, until, size, n, saved)
}

// uncachedSeries reads the window's log points with one query.
func uncachedSeries(ctx context.Context, st store.Store, since, until time.Time, size time.Duration, n int, saved saving) (*series, error) {
	acc := newSeries(since, size, n)
	acc.saved = saved
	err := st.EachLogPoint(ctx, since, until, func(p store.LogPoint) error {
		acc.add(p)
		return nil
	})
	return acc, err
}

// statsWindow is the bucket-aligned window of a call at now.
func statsWindow(now time.Time, rng, size time.Duration) (since, until time.Time, n int) {
	until = now.Truncate(size).Add(size) // the current bucket is included
	since = now.Add(-rng).Truncate(size)
	return since, until, int(until.Sub(since) / size)
}

func defaultBucket(rng time.Duration) time.Duration {
	switch {
	case rng <= 3*time.Hour:
		return time.Minute
	case rng <= 2*24*time.Hour:
		return 5 * time.Minute
	default:
		return time.Hour
	}
}

// series accumulates log points into buckets and rankings.
type series struct {
	since time.Time
	size  time.Duration
	saved saving // nil: savings are not priced
	b     []adminapi.Bucket
	ttfb  [][]int64 // per bucket, TTFBs of requests that got a first byte
	all   []int64
	total adminapi.Bucket
	top   [3]map[string]*adminapi.Rank // models, channels, tokens
}

func newSeries(since time.Time, size time.Duration, n int) *series {
	s := &series{since: since, size: size, b: make([]adminapi.Bucket, n), ttfb: make([][]int64, n)}
	for i := range s.b {
		s.b[i].Start = since.Add(time.Duration(i) * size)
	}
	for i := range s.top {
		s.top[i] = map[string]*adminapi.Rank{}
	}
	return s
}

func (s *series) add(p store.LogPoint) {
	i := int(p.Time.Sub(s.since) / s.size)
	if i < 0 || i >= len(s.b) {
		return
	}
	var saved float64
	if s.saved != nil {
		saved = s.saved(p.Model, p.CacheReadTokens)
	}
	for _, b := range []*adminapi.Bucket{&s.b[i], &s.total} {
		b.Requests++
		if p.IsError() {
			b.Errors++
		}
		b.InputTokens += p.InputTokens
		b.OutputTokens += p.OutputTokens
		b.Cost += p.Cost
		b.CacheReadTokens += p.CacheReadTokens
		b.CacheSaved += saved
	}
	if p.TTFBMs > 0 || !p.IsError() { // got a first byte
		s.ttfb[i] = append(s.ttfb[i], p.TTFBMs)
		s.all = append(s.all, p.TTFBMs)
	}
	for j, name := range []string{p.Model, p.Channel, p.Token} {
		if name == "" {
			continue
		}
		r := s.top[j][name]
		if r == nil {
			r = &adminapi.Rank{Name: name}
			s.top[j][name] = r
		}
		r.Requests++
		if p.IsError() {
			r.Errors++
		}
		r.InputTokens += p.InputTokens
		r.OutputTokens += p.OutputTokens
		r.Cost += p.Cost
		r.CacheReadTokens += p.CacheReadTokens
		r.CacheSaved += saved
	}
}

func (s *series) result(until time.Time) adminapi.StatsResponse {
	for i := range s.b {
		s.b[i].TTFBp50ms, s.b[i].TTFBp95ms = percentiles(s.ttfb[i])
		s.b[i].SetHitRate(s.b[i].InputTokens)
	}
	s.total.SetHitRate(s.total.InputTokens)
	s.total.Start = s.since
	s.total.TTFBp50ms, s.total.TTFBp95ms = percentiles(s.all)
	return adminapi.StatsResponse{
		Since: s.since, Until: until, BucketSeconds: int64(s.size / time.Second),
		Buckets: s.b, Total: s.total,
		Top: adminapi.Top{Models: ranked(s.top[0]), Channels: ranked(s.top[1]), Tokens: ranked(s.top[2])},
	}
}

// percentiles returns the nearest-rank p50 and p95 of v (sorting it).
func percentiles(v []int64) (p50, p95 int64) {
	if len(v) == 0 {
		return 0, 0
	}
	slices.Sort(v)
	at := func(p int) int64 { return v[max((p*len(v)+99)/100-1, 0)] }
	return at(50), at(95)
}

// ranked orders by cost, then requests, then name, and keeps the top N.
func ranked(m map[string]*adminapi.Rank) []adminapi.Rank {
	out := make([]adminapi.Rank, 0, len(m))
	for _, r := range m {
		r.SetHitRate(r.InputTokens)
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b adminapi.Rank) int {
		return cmp.Or(cmp.Compare(b.Cost, a.Cost), cmp.Compare(b.Requests, a.Requests), cmp.Compare(a.Name, b.Name))
	})
	return out[:min(len(out), topN)]
}
