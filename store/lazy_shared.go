package store

import (
	"context"
	"fmt"
	"time"
)

// Lazy implements Shared once connected; until then its calls fail with
// ErrNotConnected like every other call, and the feed and the spend writer
// keep their changes for later.
var _ Shared = (*Lazy)(nil)

func (l *Lazy) shared() (Shared, error) {
	st, err := l.store()
	if err != nil {
		return nil, err
	}
	sh, ok := st.(Shared)
	if !ok {
		return nil, fmt.Errorf("store: %T has no change feed", st)
	}
	return sh, nil
}

// PublishChanges implements Shared.
func (l *Lazy) PublishChanges(ctx context.Context, cs []Change) error {
	sh, err := l.shared()
	if err != nil {
		return err
	}
	return sh.PublishChanges(ctx, cs)
}

// ChangesAfter implements Shared.
func (l *Lazy) ChangesAfter(ctx context.Context, after int64, limit int) ([]Change, error) {
	sh, err := l.shared()
	if err != nil {
		return nil, err
	}
	return sh.ChangesAfter(ctx, after, limit)
}

// FirstChange implements Shared.
func (l *Lazy) FirstChange(ctx context.Context) (int64, error) {
	sh, err := l.shared()
	if err != nil {
		return 0, err
	}
	return sh.FirstChange(ctx)
}

// LastChange implements Shared.
func (l *Lazy) LastChange(ctx context.Context) (int64, error) {
	sh, err := l.shared()
	if err != nil {
		return 0, err
	}
	return sh.LastChange(ctx)
}

// PruneChanges implements Shared.
func (l *Lazy) PruneChanges(ctx context.Context, before time.Time) (int64, error) {
	sh, err := l.shared()
	if err != nil {
		return 0, err
	}
	return sh.PruneChanges(ctx, before)
}

// Listen implements Shared: ErrNoListen at once on a database without
// notifications, ErrNotConnected (try again later) before PostgreSQL is
// reached.
func (l *Lazy) Listen(ctx context.Context, wake func()) error {
	if l.driver != postgresDialect.name {
		return ErrNoListen
	}
	sh, err := l.shared()
	if err != nil {
		return err
	}
	return sh.Listen(ctx, wake)
}

// AddSpend implements Shared.
func (l *Lazy) AddSpend(ctx context.Context, ds []Spend) error {
	sh, err := l.shared()
	if err != nil {
		return err
	}
	return sh.AddSpend(ctx, ds)
}

// SpendTotals implements Shared.
func (l *Lazy) SpendTotals(ctx context.Context, day string) ([]Spend, error) {
	sh, err := l.shared()
	if err != nil {
		return nil, err
	}
	return sh.SpendTotals(ctx, day)
}
