package engine

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/store"
)

// flakyStore is a real SQLite store whose spend calls can be made to fail.
type flakyStore struct {
	store.Shared
	down bool
}

func (f *flakyStore) AddSpend(ctx context.Context, ds []store.Spend) error {
	if f.down {
		return errTestDown
	}
	return f.Shared.AddSpend(ctx, ds)
}

func (f *flakyStore) SpendTotals(ctx context.Context, day string) ([]store.Spend, error) {
	if f.down {
		return nil, errTestDown
	}
	return f.Shared.SpendTotals(ctx, day)
}

var errTestDown = context.DeadlineExceeded

// TestSharedSpendLedger: two ledgers on one database (two instances) see
// each other's spend after a flush and a refresh; spend made while the
// database is down is kept and written when it returns.
func TestSharedSpendLedger(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite", filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	day := now.Format(time.DateOnly)
	newShared := func(sp SpendStore) *ledger {
		l := newLedger(st, &fakeClock{t: now}, slog.New(slog.DiscardHandler))
		l.spendSt, l.shareSpend = sp, true
		return l
	}
	fa := &flakyStore{Shared: st.(store.Shared)}
	a, b := newShared(fa), newShared(st.(store.Shared))
	tok := &config.Token{Name: "t", CostLimit: 1}
	ch := &config.Channel{Name: "c", DailyCostLimit: 1}

	if err := a.reserveToken(tok); err != nil {
		t.Fatal(err)
	}
	a.settle("t", true, "c", day, 0.6)
	if err := b.reserveToken(tok); err != nil {
		t.Fatalf("B before A's spend is written: %v", err)
	}
	b.settle("t", true, "c", day, 0.3)
	if !a.flushSpend(ctx) || !b.flushSpend(ctx) {
		t.Fatal("flush failed")
	}
	a.refreshSpend(ctx)
	b.refreshSpend(ctx)
	for name, l := range map[string]*ledger{"A": a, "B": b} {
		if got := l.tokens["t"].total; got < 0.9-1e-9 || got > 0.9+1e-9 {
			t.Errorf("%s sees the token at $%v, want $0.9 (both instances)", name, got)
		}
		if l.channelOver(ch, day) {
			t.Errorf("%s: channel over at $0.9 of $1", name)
		}
	}

	// A's database goes away: its spend waits, its view stays.
	fa.down = true
	a.reserveToken(tok)
	a.settle("t", true, "c", day, 0.2)
	if a.flushSpend(ctx) {
		t.Fatal("flush reported success with the database down")
	}
	if err := a.reserveToken(tok); err == nil {
		t.Error("A let the token past its limit during the outage ($1.1 known)")
	}
	b.refreshSpend(ctx)
	if b.tokens["t"].total > 0.9+1e-9 {
		t.Errorf("B sees $%v before A could write", b.tokens["t"].total)
	}
	fa.down = false
	if !a.flushSpend(ctx) {
		t.Fatal("flush failed after the outage")
	}
	b.refreshSpend(ctx)
	if got := b.tokens["t"].total; got < 1.1-1e-9 || got > 1.1+1e-9 {
		t.Errorf("B sees $%v after the outage, want $1.1", got)
	}
	if err := b.reserveToken(tok); err == nil {
		t.Error("B let the token past its limit after A's spend arrived")
	}
	if !b.channelOver(ch, day) {
		t.Error("B: channel not over at $1.1 of $1")
	}
}
