package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// ErrNotConnected is what a Lazy store answers until its database has been
// reached and migrated.
var ErrNotConnected = errors.New("store: database not connected yet")

// Lazy is a Store whose database need not be reachable when the process
// starts (a PostgreSQL or MySQL server that boots after ccload, or is down
// for maintenance): OpenLazy returns at once and keeps trying to connect
// and migrate in the background. Until it succeeds every call fails with
// ErrNotConnected, so the callers' outage paths apply (the log Writer
// queues rows, then drops and counts them, and reports storage degraded);
// from then on it is the opened Store.
type Lazy struct {
	driver string

	mu      sync.Mutex
	st      Store     // nil until connected
	lastErr error     // why the last try failed
	since   time.Time // when the first try failed
	closed  bool

	stop context.CancelFunc
	done chan struct{} // closed when the connecting goroutine ends
}

// LazyOptions tune OpenLazy; zero values are sensible.
type LazyOptions struct {
	// Retry is the wait between tries (default 2s); it doubles after each
	// failure up to MaxRetry (default 10s).
	Retry, MaxRetry time.Duration
	Logger          *slog.Logger
}

// OpenLazy is Open that does not need the database now. A setting no wait
// can fix (unknown driver, empty DSN) fails at once, as does any failure
// of SQLite, whose database is a local file. For the server databases one
// try is made before returning (so a reachable database is used from the
// first request); if it fails, the Lazy keeps trying until Close.
func OpenLazy(ctx context.Context, driver, dsn string, opts LazyOptions) (*Lazy, error) {
	if _, err := dialectFor(driver, dsn); err != nil {
		return nil, err
	}
	if driver == sqliteDialect.name {
		st, err := Open(ctx, driver, dsn)
		if err != nil {
			return nil, err
		}
		return &Lazy{driver: driver, st: st, done: closedChan()}, nil
	}
	if opts.Retry <= 0 {
		opts.Retry = 2 * time.Second
	}
	if opts.MaxRetry < opts.Retry {
		opts.MaxRetry = max(10*time.Second, opts.Retry)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	l := &Lazy{driver: driver, done: make(chan struct{})}
	st, err := Open(ctx, driver, dsn)
	if err == nil {
		l.st = st
		close(l.done)
		return l, nil
	}
	l.lastErr, l.since = err, time.Now()
	opts.Logger.Warn("storage not reachable at start; serving without it and connecting in the background (request logs are queued, then dropped and counted)",
		"driver", driver, "err", err)
	bg, stop := context.WithCancel(context.Background())
	l.stop = stop
	go l.connect(bg, dsn, opts)
	return l, nil
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// connect retries Open until it succeeds or ctx ends.
func (l *Lazy) connect(ctx context.Context, dsn string, opts LazyOptions) {
	defer close(l.done)
	wait := opts.Retry
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		octx, cancel := context.WithTimeout(ctx, max(10*time.Second, wait))
		st, err := Open(octx, l.driver, dsn)
		cancel()
		if err == nil {
			l.mu.Lock()
			if l.closed {
				l.mu.Unlock()
				st.Close()
				return
			}
			l.st, l.lastErr = st, nil
			l.mu.Unlock()
			opts.Logger.Info("storage connected", "driver", l.driver, "after", time.Since(l.since).Round(time.Second))
			return
		}
		l.mu.Lock()
		l.lastErr = err
		l.mu.Unlock()
		opts.Logger.Warn("storage still not reachable", "driver", l.driver, "retry_in", wait, "err", err)
		wait = min(wait*2, opts.MaxRetry)
	}
}

// Pending reports, while the database has not been reached, since when
// and why; err is nil once connected.
func (l *Lazy) Pending() (since time.Time, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st != nil {
		return time.Time{}, nil
	}
	return l.since, fmt.Errorf("%w: %v", ErrNotConnected, l.lastErr)
}

// Connected is closed once the connecting goroutine ended (connected, or
// Close was called).
func (l *Lazy) Connected() <-chan struct{} { return l.done }

func (l *Lazy) store() (Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st == nil {
		if l.closed {
			return nil, errors.New("store: closed")
		}
		return nil, fmt.Errorf("%w: %v", ErrNotConnected, l.lastErr)
	}
	return l.st, nil
}

// Close stops connecting and closes the database if it was reached.
func (l *Lazy) Close() error {
	l.mu.Lock()
	l.closed = true
	st := l.st
	l.mu.Unlock()
	if l.stop != nil {
		l.stop()
	}
	<-l.done
	if st == nil {
		l.mu.Lock()
		st = l.st
		l.mu.Unlock()
	}
	if st != nil {
		return st.Close()
	}
	return nil
}

// Driver is the configured driver, connected or not.
func (l *Lazy) Driver() string { return l.driver }

func (l *Lazy) InsertLogs(ctx context.Context, rows []LogRow) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.InsertLogs(ctx, rows)
}

func (l *Lazy) QueryLogs(ctx context.Context, q LogQuery) ([]LogRow, error) {
	s, err := l.store()
	if err != nil {
		return nil, err
	}
	return s.QueryLogs(ctx, q)
}

func (l *Lazy) GetLog(ctx context.Context, id int64) (LogRow, error) {
	s, err := l.store()
	if err != nil {
		return LogRow{}, err
	}
	return s.GetLog(ctx, id)
}

func (l *Lazy) EachLogPoint(ctx context.Context, since, until time.Time, fn func(LogPoint) error) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.EachLogPoint(ctx, since, until, fn)
}

func (l *Lazy) EachLogPointAfter(ctx context.Context, since, until time.Time, afterID int64, fn func(LogPoint) error) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.EachLogPointAfter(ctx, since, until, afterID, fn)
}

func (l *Lazy) LogPointDigest(ctx context.Context, since, until time.Time, maxID int64) (int64, int64, error) {
	s, err := l.store()
	if err != nil {
		return 0, 0, err
	}
	return s.LogPointDigest(ctx, since, until, maxID)
}

func (l *Lazy) PruneLogs(ctx context.Context, before time.Time) (int64, error) {
	s, err := l.store()
	if err != nil {
		return 0, err
	}
	return s.PruneLogs(ctx, before)
}

func (l *Lazy) UpsertCooldown(ctx context.Context, c Cooldown) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.UpsertCooldown(ctx, c)
}

func (l *Lazy) DeleteCooldown(ctx context.Context, k CooldownKey) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.DeleteCooldown(ctx, k)
}

func (l *Lazy) ListCooldowns(ctx context.Context, now time.Time) ([]Cooldown, error) {
	s, err := l.store()
	if err != nil {
		return nil, err
	}
	return s.ListCooldowns(ctx, now)
}

func (l *Lazy) TokenCost(ctx context.Context, token string) (float64, error) {
	s, err := l.store()
	if err != nil {
		return 0, err
	}
	return s.TokenCost(ctx, token)
}

func (l *Lazy) ChannelCostOn(ctx context.Context, channel string, day string) (float64, error) {
	s, err := l.store()
	if err != nil {
		return 0, err
	}
	return s.ChannelCostOn(ctx, channel, day)
}

func (l *Lazy) UsageDaily(ctx context.Context, since string) ([]UsageDay, error) {
	s, err := l.store()
	if err != nil {
		return nil, err
	}
	return s.UsageDaily(ctx, since)
}

func (l *Lazy) SetOverride(ctx context.Context, o Override) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.SetOverride(ctx, o)
}

func (l *Lazy) DeleteOverride(ctx context.Context, kind, target string) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.DeleteOverride(ctx, kind, target)
}

func (l *Lazy) ListOverrides(ctx context.Context) ([]Override, error) {
	s, err := l.store()
	if err != nil {
		return nil, err
	}
	return s.ListOverrides(ctx)
}

func (l *Lazy) SchemaVersion(ctx context.Context) (int, error) {
	s, err := l.store()
	if err != nil {
		return 0, err
	}
	return s.SchemaVersion(ctx)
}

func (l *Lazy) Ping(ctx context.Context) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.Ping(ctx)
}

func (l *Lazy) CreateSession(ctx context.Context, se AdminSession) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.CreateSession(ctx, se)
}

func (l *Lazy) Session(ctx context.Context, id string) (AdminSession, bool, error) {
	s, err := l.store()
	if err != nil {
		return AdminSession{}, false, err
	}
	return s.Session(ctx, id)
}

func (l *Lazy) DeleteSession(ctx context.Context, id string) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.DeleteSession(ctx, id)
}

func (l *Lazy) PruneSessions(ctx context.Context, now time.Time) (int64, error) {
	s, err := l.store()
	if err != nil {
		return 0, err
	}
	return s.PruneSessions(ctx, now)
}

func (l *Lazy) Heartbeat(ctx context.Context, in Instance) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.Heartbeat(ctx, in)
}

func (l *Lazy) ListInstances(ctx context.Context, since time.Time) ([]Instance, error) {
	s, err := l.store()
	if err != nil {
		return nil, err
	}
	return s.ListInstances(ctx, since)
}

func (l *Lazy) DeleteInstance(ctx context.Context, id string) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.DeleteInstance(ctx, id)
}

func (l *Lazy) PruneInstances(ctx context.Context, before time.Time) (int64, error) {
	s, err := l.store()
	if err != nil {
		return 0, err
	}
	return s.PruneInstances(ctx, before)
}

// catalogStore is the price catalog's part of the SQL store.
type catalogStore interface {
	SaveCatalog(ctx context.Context, c CatalogCopy) error
	LoadCatalog(ctx context.Context, url string) (CatalogCopy, bool, error)
}

func (l *Lazy) SaveCatalog(ctx context.Context, c CatalogCopy) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.(catalogStore).SaveCatalog(ctx, c)
}

func (l *Lazy) LoadCatalog(ctx context.Context, url string) (CatalogCopy, bool, error) {
	s, err := l.store()
	if err != nil {
		return CatalogCopy{}, false, err
	}
	return s.(catalogStore).LoadCatalog(ctx, url)
}

var _ Store = (*Lazy)(nil)
