// Package feed shares runtime state between ccload instances on one
// PostgreSQL or MySQL database (storage.shared; docs/scale-out.md "Shared
// state"), through the store's change feed (store.Shared).
//
// Writing: Publish hands a change over without waiting. Changes wait in a
// map keyed by (kind, item), so that a later change of an item replaces an
// earlier one that was not written yet, and are written in batches every
// FlushEvery, in the order they were made. A batch that fails (the
// database is down) stays and is written when the database answers again:
// nothing is lost during an outage but superseded intermediate states.
//
// Reading: the follower reads the changes after the last version it has
// seen, wakened by PostgreSQL notifications and in any case every
// PollEvery, and hands the other instances' changes to Apply in version
// order. Its own changes are skipped by instance id, and Apply must not
// publish: a remote change is applied, never written back, so nothing
// echoes around the cluster.
//
// Versions are assigned when a row is inserted but become visible when its
// transaction commits, so a reader can see version 8 before version 7. The
// cursor therefore stops below a missing version for up to GapWait before
// it gives up on it (a rolled-back insert leaves a permanent hole).
//
// An instance whose cursor fell below the oldest change still in the feed
// (the feed keeps Retain) missed changes: it calls Resync, which reloads
// the full state from the tables.
package feed

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ccload/ccload/store"
)

// Store is what a Feed needs of the database.
type Store interface {
	PublishChanges(ctx context.Context, cs []store.Change) error
	ChangesAfter(ctx context.Context, after int64, limit int) ([]store.Change, error)
	FirstChange(ctx context.Context) (int64, error)
	LastChange(ctx context.Context) (int64, error)
	PruneChanges(ctx context.Context, before time.Time) (int64, error)
	Listen(ctx context.Context, wake func()) error
}

// Defaults of Options.
const (
	DefaultFlushEvery = 100 * time.Millisecond
	DefaultPollEvery  = 500 * time.Millisecond
	DefaultGapWait    = 5 * time.Second
	DefaultRetain     = time.Hour
)

// Options configure New. Zero durations take the defaults above.
type Options struct {
	Store    Store
	Instance string // this instance's id, stored with its changes
	// Apply takes another instance's change. It is called from the
	// follower goroutine only, in version order, and must not block on
	// the database or Publish.
	Apply func(store.Change)
	// Resync reloads the whole shared state from the tables, after the
	// follower missed changes that the feed no longer holds. May be nil.
	Resync func(context.Context) error
	Logger *slog.Logger

	FlushEvery, PollEvery, GapWait, Retain time.Duration
}

// Feed publishes this instance's changes and follows the others'. Create
// it with New, call Start once, then Run.
type Feed struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	pending map[itemKey]*pending
	seq     uint64

	// The follower's state, touched by Run's goroutine only.
	cursor  int64          // every version <= cursor is handled
	handled map[int64]bool // versions above cursor already handled
	gapAt   int64          // the missing version the cursor waits on
	gapFrom time.Time      // since when it waits
	behind  bool           // the last read failed: check for pruning first

	stats statCounters
}

type itemKey struct{ kind, item string }

type pending struct {
	seq   uint64
	value string
	write func(context.Context) error
}

// New returns a Feed; it does nothing until Run.
func New(opts Options) *Feed {
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = DefaultFlushEvery
	}
	if opts.PollEvery <= 0 {
		opts.PollEvery = DefaultPollEvery
	}
	if opts.GapWait <= 0 {
		opts.GapWait = DefaultGapWait
	}
	if opts.Retain <= 0 {
		opts.Retain = DefaultRetain
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Feed{opts: opts, log: log, pending: map[itemKey]*pending{}, handled: map[int64]bool{}}
}

// Instance is this instance's id.
func (f *Feed) Instance() string { return f.opts.Instance }

// Start places the follower's cursor at the end of the feed. Call it
// before loading the state from the tables, so that a change made between
// that load and Run is read again rather than missed (applying it twice
// is harmless: a change carries a whole state, not a delta).
func (f *Feed) Start(ctx context.Context) error {
	last, err := f.opts.Store.LastChange(ctx)
	if err != nil {
		return err
	}
	f.cursor = last
	f.stats.cursor.Store(last)
	return nil
}

// Publish queues a change of (kind, item) to value ("" = removed). write,
// when not nil, is run before the change is published, on the flushing
// goroutine, and again on the next flush while it fails: the durable
// side of the change (the cooldowns table). Publish never blocks on the
// database.
func (f *Feed) Publish(kind, item, value string, write func(context.Context) error) {
	f.mu.Lock()
	f.seq++
	f.pending[itemKey{kind, item}] = &pending{seq: f.seq, value: value, write: write}
	f.mu.Unlock()
}

// Run publishes and follows until ctx ends, then makes one last attempt to
// publish what is pending.
func (f *Feed) Run(ctx context.Context) {
	wake := make(chan struct{}, 1)
	go f.listen(ctx, wake)
	flush := time.NewTicker(f.opts.FlushEvery)
	defer flush.Stop()
	poll := time.NewTicker(f.opts.PollEvery)
	defer poll.Stop()
	prune := time.NewTicker(f.opts.Retain / 12)
	defer prune.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			f.flush(fctx)
			cancel()
			return
		case <-flush.C:
			f.flush(ctx)
		case <-wake:
			f.follow(ctx)
		case <-poll.C:
			f.follow(ctx)
		case <-prune.C:
			f.prune(ctx)
		}
	}
}

// listen wakes the follower on PostgreSQL notifications, reconnecting
// after a failure; on other databases it returns at once (poll only).
func (f *Feed) listen(ctx context.Context, wake chan<- struct{}) {
	for {
		err := f.opts.Store.Listen(ctx, func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
		if errors.Is(err, store.ErrNoListen) || ctx.Err() != nil {
			return
		}
		f.log.Debug("shared state: change notifications interrupted; polling until they are back", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// dbTimeout bounds each database call of the feed.
const dbTimeout = 5 * time.Second

// flush writes the pending changes in the order they were made.
func (f *Feed) flush(ctx context.Context) {
	f.mu.Lock()
	if len(f.pending) == 0 {
		f.mu.Unlock()
		return
	}
	type item struct {
		k itemKey
		p *pending
	}
	batch := make([]item, 0, len(f.pending))
	for k, p := range f.pending {
		batch = append(batch, item{k, p})
	}
	f.mu.Unlock()
	slices.SortFunc(batch, func(a, b item) int { return cmp.Compare(a.p.seq, b.p.seq) })

	ctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	cs := make([]store.Change, 0, len(batch))
	for _, it := range batch {
		if it.p.write != nil {
			if err := it.p.write(ctx); err != nil {
				f.failed("publish", err)
				return
			}
		}
		cs = append(cs, store.Change{Instance: f.opts.Instance, Kind: it.k.kind, Item: it.k.item, Value: it.p.value})
	}
	if err := f.opts.Store.PublishChanges(ctx, cs); err != nil {
		f.failed("publish", err)
		return
	}
	f.mu.Lock()
	for _, it := range batch {
		if p := f.pending[it.k]; p == it.p { // not replaced meanwhile
			delete(f.pending, it.k)
		}
	}
	f.mu.Unlock()
	f.stats.published.Add(int64(len(cs)))
	f.recovered()
}

// pageSize is how many changes one read takes.
const pageSize = 1000

// follow applies the changes after the cursor.
func (f *Feed) follow(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	if f.behind {
		// Back from an outage: were changes pruned while we were away?
		first, err := f.opts.Store.FirstChange(ctx)
		if err != nil {
			f.failed("read", err)
			return
		}
		if first > f.cursor+1 {
			if err := f.resync(ctx); err != nil {
				f.failed("resync", err)
				return
			}
		}
		f.behind = false
	}
	after := f.cursor
	for {
		cs, err := f.opts.Store.ChangesAfter(ctx, after, pageSize)
		if err != nil {
			f.behind = true
			f.failed("read", err)
			return
		}
		for _, c := range cs {
			if c.Version <= f.cursor || f.handled[c.Version] {
				continue
			}
			f.handled[c.Version] = true
			if c.Instance != f.opts.Instance {
				f.opts.Apply(c)
				f.stats.applied.Add(1)
			}
		}
		if len(cs) < pageSize {
			break
		}
		after = cs[len(cs)-1].Version
	}
	f.advance(time.Now())
	f.stats.cursor.Store(f.cursor)
	f.recovered()
}

// advance moves the cursor over the handled versions, waiting up to
// GapWait at a missing one (see the package comment).
func (f *Feed) advance(now time.Time) {
	for len(f.handled) > 0 {
		next := f.cursor + 1
		if f.handled[next] {
			delete(f.handled, next)
			f.cursor = next
			continue
		}
		if f.gapAt != next {
			f.gapAt, f.gapFrom = next, now
		}
		if now.Sub(f.gapFrom) < f.opts.GapWait {
			return
		}
		f.cursor = next // a hole that will not fill: an insert rolled back
	}
}

// resync reloads the whole state and moves the cursor to the feed's end.
func (f *Feed) resync(ctx context.Context) error {
	last, err := f.opts.Store.LastChange(ctx)
	if err != nil {
		return err
	}
	if f.opts.Resync != nil {
		if err := f.opts.Resync(ctx); err != nil {
			return err
		}
	}
	f.log.Warn("shared state: changes were pruned from the feed while this instance could not read it; reloaded the state from the tables")
	f.cursor, f.handled, f.gapAt = last, map[int64]bool{}, 0
	f.stats.resyncs.Add(1)
	return nil
}

func (f *Feed) prune(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	if _, err := f.opts.Store.PruneChanges(ctx, time.Now().Add(-f.opts.Retain)); err != nil {
		f.log.Debug("shared state: pruning the change feed failed; the next run retries", "err", err)
	}
}

// failed notes a failed database call; the first of an outage is logged.
func (f *Feed) failed(op string, err error) {
	f.stats.errors.Add(1)
	if f.stats.down.Swap(true) {
		return
	}
	f.log.Warn("shared state: the database does not answer; serving from this instance's last known state and catching up when it returns",
		"op", op, "err", err)
}

func (f *Feed) recovered() {
	if f.stats.down.Swap(false) {
		f.log.Info("shared state: the database answers again; catching up")
	}
}
