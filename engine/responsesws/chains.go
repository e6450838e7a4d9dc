package responsesws

import "sync/atomic"

// chains are the response chains one socket remembers: for each response
// id it produced, the whole transcript (every input item and every output
// item) that a later turn naming it continues. They are what lets any
// candidate serve a turn: the id is replaced by this transcript.
//
// Bounds: at most max chains (the least recently used is forgotten, and a
// turn naming it gets previous_response_not_found); a transcript over
// maxBytes is refused before any upstream call (the client starts a new
// chain). Everything goes when the socket closes.
type chains struct {
	max      int
	maxBytes int64
	m        map[string]*chain
	tick     uint64
	stats    *Stats
}

type chain struct {
	items [][]byte
	bytes int64
	used  uint64
}

func newChains(max int, maxBytes int64, stats *Stats) *chains {
	return &chains{max: max, maxBytes: maxBytes, m: map[string]*chain{}, stats: stats}
}

func (c *chains) get(id string) (*chain, bool) {
	ch, ok := c.m[id]
	if ok {
		c.tick++
		ch.used = c.tick
	}
	return ch, ok
}

// put remembers items as the transcript behind id, forgetting the least
// recently used chain when the socket holds max already.
func (c *chains) put(id string, items [][]byte) {
	if old, ok := c.m[id]; ok {
		c.drop(id, old)
	}
	for len(c.m) >= c.max && c.max > 0 {
		var lru string
		var at uint64
		for k, ch := range c.m {
			if lru == "" || ch.used < at {
				lru, at = k, ch.used
			}
		}
		c.drop(lru, c.m[lru])
	}
	c.tick++
	ch := &chain{items: items, bytes: size(items), used: c.tick}
	c.m[id] = ch
	c.stats.Sessions.Add(1)
	c.stats.TranscriptBytes.Add(ch.bytes)
}

func (c *chains) drop(id string, ch *chain) {
	delete(c.m, id)
	c.stats.Sessions.Add(-1)
	c.stats.TranscriptBytes.Add(-ch.bytes)
}

// close forgets every chain (the socket ended).
func (c *chains) close() {
	for id, ch := range c.m {
		c.drop(id, ch)
	}
}

func size(items [][]byte) int64 {
	var n int64
	for _, it := range items {
		n += int64(len(it)) + 1
	}
	return n
}

// Stats are the transport's gauges and counters, for /metrics and
// /admin/status.
type Stats struct {
	Sockets         atomic.Int64 // open downstream sockets
	Sessions        atomic.Int64 // response chains remembered over all sockets
	TranscriptBytes atomic.Int64 // bytes those chains hold
	Turns           atomic.Int64 // response.create frames served (warm-ups included)
	Refused         atomic.Int64 // upgrades refused by a socket limit
}
