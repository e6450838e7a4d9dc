package store

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/ccload/ccload/internal/clock"
)

// RetentionOptions tunes a Retention. Zero fields take their defaults.
type RetentionOptions struct {
	// Keep returns how long request logs are kept (storage.log_retention).
	// It is read on every run, so a config reload takes effect at the next
	// one. A zero or negative value keeps logs forever. Required.
	Keep func() time.Duration
	// Every is the time between runs (default an hour).
	Every time.Duration
	// RetryAfter is the wait after a failed run, when shorter than Every
	// (default a minute), so an outage at the top of the hour does not
	// postpone pruning by a whole hour.
	RetryAfter time.Duration
	// Clock gives the current time, which the cutoff is computed from
	// (nil = the wall clock).
	Clock clock.Clock
	// Logger receives one line per run that deleted rows or failed.
	Logger *slog.Logger
}

// RetentionStats reports what a Retention has done, for /health.
type RetentionStats struct {
	Keep        time.Duration // the retention of the last run; 0: logs are kept forever
	LastRun     time.Time     // when the last run finished; zero before the first
	LastDeleted int64         // rows the last run deleted
	Deleted     int64         // rows deleted since start
	LastError   string        // the last run's error, "" when it succeeded
}

// Retention enforces storage.log_retention (design §8): it deletes request
// logs older than the retention once when Run starts and then every Every.
// Deleting goes through Store.PruneLogs, which works in bounded batches, so
// the database is never locked for long; requests never wait on it, as they
// only hand rows to the Writer. usage_daily is kept but for the rows of
// requests no upstream saw, which go with their day's logs.
type Retention struct {
	st   Store
	opts RetentionOptions

	mu    sync.Mutex
	stats RetentionStats
}

// NewRetention returns a Retention on st; call Run to start it.
func NewRetention(st Store, opts RetentionOptions) *Retention {
	if opts.Every <= 0 {
		opts.Every = time.Hour
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = time.Minute
	}
	if opts.Clock == nil {
		opts.Clock = clock.Wall{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Retention{st: st, opts: opts}
}

// Run prunes now, then every Every (RetryAfter after a failure), until ctx
// ends. A run in progress when ctx ends is cancelled.
func (r *Retention) Run(ctx context.Context) {
	for {
		wait := r.opts.Every
		if err := r.RunOnce(ctx); err != nil {
			wait = min(wait, r.opts.RetryAfter)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// RunOnce deletes the logs older than the retention now, and returns the
// store's error, if any.
func (r *Retention) RunOnce(ctx context.Context) error {
	keep := r.opts.Keep()
	var n int64
	var err error
	if keep > 0 {
		n, err = r.st.PruneLogs(ctx, r.opts.Clock.Now().Add(-keep))
	}
	r.mu.Lock()
	r.stats.Keep = max(keep, 0)
	r.stats.LastRun = r.opts.Clock.Now()
	r.stats.LastDeleted = n
	r.stats.Deleted += n
	r.stats.LastError = ""
	if err != nil {
		r.stats.LastError = err.Error()
	}
	r.mu.Unlock()
	switch {
	case err != nil:
		r.opts.Logger.Warn("log retention: pruning failed; retrying later", "deleted", n, "err", err)
	case n > 0:
		r.opts.Logger.Info("log retention: pruned request logs", "deleted", n, "older_than", keep.String())
	}
	return err
}

// Stats returns what the runs so far have done.
func (r *Retention) Stats() RetentionStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}
