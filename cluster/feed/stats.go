package feed

import "sync/atomic"

// Stats is what /health shows of the shared state.
type Stats struct {
	Instance  string `json:"instance"`
	Version   int64  `json:"version"`   // the follower's cursor
	Pending   int    `json:"pending"`   // changes of this instance not written yet
	Published int64  `json:"published"` // changes of this instance written
	Applied   int64  `json:"applied"`   // changes of other instances applied
	Resyncs   int64  `json:"resyncs"`   // full reloads after missed changes
	Errors    int64  `json:"errors"`    // failed database calls
	Down      bool   `json:"down"`      // the last database call failed
}

type statCounters struct {
	published, applied, resyncs, errors atomic.Int64
	down                                atomic.Bool
	cursor                              atomic.Int64
}

// Stats returns the feed's counters now.
func (f *Feed) Stats() Stats {
	f.mu.Lock()
	pending := len(f.pending)
	f.mu.Unlock()
	return Stats{
		Instance:  f.opts.Instance,
		Version:   f.stats.cursor.Load(),
		Pending:   pending,
		Published: f.stats.published.Load(),
		Applied:   f.stats.applied.Load(),
		Resyncs:   f.stats.resyncs.Load(),
		Errors:    f.stats.errors.Load(),
		Down:      f.stats.down.Load(),
	}
}
