package admin

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/ccload/ccload/store"
)

// statsCache keeps, per (range, bucket) asked for, the log points of the
// window read so far and the highest row ID folded in, so that a call reads
// only the rows inserted since the last one.
//
// It caches compact points rather than pre-summed buckets on purpose: the
// response's costs are float64 sums taken in (time, id) order, and float
// addition is not associative, so summing per bucket and then across buckets
// (or in arrival order) would change the last digits of Cost in the JSON. The
// cached path therefore re-folds the cached points with the same series code
// in the same order as the uncached one, which gives byte-identical JSON; the
// database read, which is what cost ~300 ms, is what it saves.
//
// Exactness against pruning and late commits: before trusting the cache a
// call asks the store for the count and the sum of the IDs of the window's
// rows at or below the cursor (LogPointDigest, an index range scan) and
// rebuilds the entry from scratch when they differ from the cached points
// (rows pruned, or a transaction of another instance committing a row with
// an ID below the cursor after the cursor passed it).
//
// Memory bound: at most statsCacheKeys entries, each with at most
// statsCachePoints points (80 bytes each, cachedPoint, plus the names), so
// about statsCacheKeys*statsCachePoints*80 B = 4*500 000*80 B ≈ 160 MB in
// the very worst case, and about 8 MB for 100 000 rows in a 24 h window.
// A window with more rows than that is served uncached.
type statsCache struct {
	mu sync.Mutex
	m  map[statsKey]*statsEntry
}

const (
	statsCacheKeys   = 4
	statsCachePoints = 500_000
)

type statsKey struct{ rng, size time.Duration }

type statsEntry struct {
	mu     sync.Mutex // serializes calls for one key
	used   time.Time  // last use, for eviction
	valid  bool
	lastID int64
	since  time.Time     // points before since were dropped
	pts    []cachedPoint // sorted by (time, id), time >= since
	names  *names        // the model/channel/token names pts refer to
}

// farFuture bounds the incremental read from above: rows stamped after the
// current window are kept so that they count once the window reaches them.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

func (c *statsCache) entry(k statsKey, now time.Time) *statsEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[statsKey]*statsEntry{}
	}
	e := c.m[k]
	if e == nil {
		if len(c.m) >= statsCacheKeys { // evict the least recently used
			var old statsKey
			var oldest *statsEntry
			for k2, e2 := range c.m {
				if oldest == nil || e2.used.Before(oldest.used) {
					old, oldest = k2, e2
				}
			}
			delete(c.m, old)
		}
		e = &statsEntry{}
		c.m[k] = e
	}
	e.used = now
	return e
}

// series returns the window's series computed from the cached points after
// bringing them up to date; ok is false when the window is too large to
// cache (the caller then reads it uncached).
func (e *statsEntry) series(ctx context.Context, st store.Store, since, until time.Time, size time.Duration, n int, saved saving) (acc *series, ok bool, err error) {
	if e.valid && since.Before(e.since) {
		e.valid = false // cannot happen with a monotonic clock; be safe
	}
	if !e.valid {
		e.pts, e.names, e.lastID, e.since = e.pts[:0], newNames(), 0, since
	}
	// Drop what left the window.
	if i, _ := slices.BinarySearchFunc(e.pts, since.UnixNano(), func(p cachedPoint, t int64) int { return cmp.Compare(p.ns, t) }); i > 0 {
		e.pts = slices.Delete(e.pts, 0, i)
	}
	e.since = since
	if e.valid {
		var cn, csum int64
		u := until.UnixNano()
		for _, p := range e.pts {
			if p.ns < u {
				cn, csum = cn+1, csum+p.id
			}
		}
		dn, dsum, err := st.LogPointDigest(ctx, since, until, e.lastID)
		if err != nil {
			return nil, false, err
		}
		if dn != cn || dsum != csum {
			e.pts, e.names, e.lastID = e.pts[:0], newNames(), 0
		}
	}
	if len(e.pts) == 0 {
		// A rebuild (the warm-up at start, or after pruning): size the slice
		// once from the row count. Grown by appending, 100k+ points leave tens
		// of MB of dropped arrays behind, which stay in the process's RSS.
		if n, _, err := st.LogPointDigest(ctx, since, farFuture, math.MaxInt64); err == nil && n > 0 && n <= statsCachePoints {
			e.pts = make([]cachedPoint, 0, n+n/16)
		}
	}
	e.valid = false // until the read below succeeds
	sorted := true
	err = st.EachLogPointAfter(ctx, since, farFuture, e.lastID, func(p store.LogPoint) error {
		if len(e.pts) >= statsCachePoints {
			return errTooMany
		}
		c := compact(p, e.names)
		if l := len(e.pts); l > 0 && pointCmp(e.pts[l-1], c) > 0 {
			sorted = false
		}
		e.pts = append(e.pts, c)
		e.lastID = max(e.lastID, p.ID)
		return nil
	})
	if err == errTooMany {
		e.pts, e.names = nil, nil
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !sorted {
		slices.SortStableFunc(e.pts, pointCmp)
	}
	e.valid = true
	acc = newSeries(since, size, n)
	acc.saved = saved
	u := until.UnixNano()
	for _, c := range e.pts {
		if c.ns >= u {
			break
		}
		acc.add(c.point(e.names))
	}
	return acc, true, nil
}

func pointCmp(a, b cachedPoint) int {
	return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.id, b.id))
}

type tooManyPoints struct{}

func (tooManyPoints) Error() string { return "admin: stats window too large to cache" }

var errTooMany error = tooManyPoints{}
