package admin

import (
	"math"
	"time"

	"github.com/ccload/ccload/store"
)

// cachedPoint is a store.LogPoint as the stats cache keeps it: 80 bytes
// instead of 144. The time is Unix nanoseconds (no location pointer), the
// names are indexes into the entry's name table, the durations int32
// milliseconds (24 days) and the status int16. A day of heavy traffic is
// hundreds of thousands of points held for the whole day, so this is most
// of the cache's memory (perf).
type cachedPoint struct {
	id, ns                         int64
	cost                           float64
	in, out, cacheRead, cacheWrite int64
	ttfb, dur                      int32
	model, channel, token          uint32
	status                         int16
}

// names is an entry's table of the model, channel and token names its
// points refer to.
type names struct {
	index map[string]uint32
	list  []string
}

func newNames() *names { return &names{index: map[string]uint32{}} }

func (n *names) id(s string) uint32 {
	if i, ok := n.index[s]; ok {
		return i
	}
	i := uint32(len(n.list))
	n.index[s] = i
	n.list = append(n.list, s)
	return i
}

func clamp32(v int64) int32 { return int32(max(min(v, math.MaxInt32), math.MinInt32)) }

func clamp16(v int) int16 { return int16(max(min(v, math.MaxInt16), math.MinInt16)) }

// compact makes the cached form of p, interning its names in n.
func compact(p store.LogPoint, n *names) cachedPoint {
	return cachedPoint{
		id: p.ID, ns: p.Time.UnixNano(), cost: p.Cost,
		in: p.InputTokens, out: p.OutputTokens, cacheRead: p.CacheReadTokens, cacheWrite: p.CacheWriteTokens,
		ttfb: clamp32(p.TTFBMs), dur: clamp32(p.DurationMs),
		model: n.id(p.Model), channel: n.id(p.Channel), token: n.id(p.Token),
		status: clamp16(p.Status),
	}
}

// point is the store.LogPoint c stands for (its Time in UTC).
func (c cachedPoint) point(n *names) store.LogPoint {
	return store.LogPoint{
		ID: c.id, Time: time.Unix(0, c.ns).UTC(),
		Token: n.list[c.token], Channel: n.list[c.channel], Model: n.list[c.model],
		Status: int(c.status), TTFBMs: int64(c.ttfb), DurationMs: int64(c.dur),
		InputTokens: c.in, OutputTokens: c.out, CacheReadTokens: c.cacheRead, CacheWriteTokens: c.cacheWrite,
		Cost: c.cost,
	}
}
