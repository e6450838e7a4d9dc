package spend

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/store"
)

// scriptedCosts answers TokenCost from a function, so a test can fail it or
// hold it.
type scriptedCosts struct {
	token func(name string) (float64, error)
}

func (s scriptedCosts) TokenCost(_ context.Context, name string) (float64, error) {
	return s.token(name)
}
func (s scriptedCosts) ChannelCostOn(context.Context, string, string) (float64, error) {
	return 0, nil
}

// TestLedgerRetriesAFailedLoad: a failed read is not taken as $0 spent for
// the life of the process: once loadRetry has passed, the next request
// reads again and the real spend applies.
func TestLedgerRetriesAFailedLoad(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	var mu sync.Mutex
	calls, down := 0, true
	l := New(Options{Costs: scriptedCosts{token: func(string) (float64, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if down {
			return 0, errors.New("database unreachable")
		}
		return 7, nil
	}}, Clock: clk, Log: slog.New(slog.DiscardHandler)})
	tok := &config.Token{Name: "t", CostLimit: 5}
	if err := l.ReserveToken(tok); err != nil {
		t.Fatalf("while the database is down the limit fails open: %v", err)
	}
	mu.Lock()
	down = false
	mu.Unlock()
	if err := l.ReserveToken(tok); err != nil || calls != 1 {
		t.Fatalf("before loadRetry: err %v, %d reads; want no new read yet", err, calls)
	}
	clk.Advance(loadRetry)
	if err := l.ReserveToken(tok); err == nil || calls != 2 {
		t.Fatalf("after loadRetry: err %v, %d reads; want the $7 read again and the $5 limit refusing", err, calls)
	}
}

// TestLedgerReadsOutsideItsLock: while one token's spend is being read,
// requests of other tokens and channels go through.
func TestLedgerReadsOutsideItsLock(t *testing.T) {
	release := make(chan struct{})
	l := New(Options{Costs: scriptedCosts{token: func(name string) (float64, error) {
		if name == "slow" {
			<-release
		}
		return 0, nil
	}}, Clock: clock.NewFake(time.Now()), Log: slog.New(slog.DiscardHandler)})
	slowDone := make(chan error, 1)
	go func() { slowDone <- l.ReserveToken(&config.Token{Name: "slow", CostLimit: 1}) }()
	if err := l.ReserveToken(&config.Token{Name: "fast", CostLimit: 1}); err != nil {
		t.Fatal(err)
	}
	if l.ChannelOver(&config.Channel{Name: "c", DailyCostLimit: 1}, "2026-05-01") {
		t.Fatal("channel over its limit")
	}
	l.Settle("fast", true, "c", "2026-05-01", 0.5)
	close(release)
	if err := <-slowDone; err != nil {
		t.Fatal(err)
	}
}

// TestLedgerSpendSurvivesRestart: a new ledger (a restarted process) starts
// from what the log rows put in usage_daily.
func TestLedgerSpendSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite", filepath.Join(t.TempDir(), "l.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	rows := []store.LogRow{
		{Time: now, RequestID: "1", Token: "t", Channel: "c", Status: 200, Cost: 0.75},
		{Time: now, RequestID: "2", Token: "t", Channel: "c", Status: 200, Cost: 0.5},
	}
	if err := st.InsertLogs(ctx, rows); err != nil {
		t.Fatal(err)
	}
	l := New(Options{Costs: st, Clock: clock.NewFake(now), Log: slog.New(slog.DiscardHandler)})
	if err := l.ReserveToken(&config.Token{Name: "t", CostLimit: 1.25}); err == nil {
		t.Fatal("a fresh ledger let through a token that already spent $1.25 of $1.25")
	}
	if err := l.ReserveToken(&config.Token{Name: "t", CostLimit: 1.3}); err != nil {
		t.Fatalf("$1.25 spent of $1.30: %v", err)
	}
	if !l.ChannelOver(&config.Channel{Name: "c", DailyCostLimit: 1.2}, now.Format(time.DateOnly)) {
		t.Fatal("channel spent $1.25 today, limit $1.20, not over")
	}
}

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
	newShared := func(sp SharedStore) *Ledger {
		return New(Options{Costs: st, Shared: sp, Share: true, Clock: clock.NewFake(now), Log: slog.New(slog.DiscardHandler)})
	}
	fa := &flakyStore{Shared: st.(store.Shared)}
	a, b := newShared(fa), newShared(st.(store.Shared))
	tok := &config.Token{Name: "t", CostLimit: 1}
	ch := &config.Channel{Name: "c", DailyCostLimit: 1}

	if err := a.ReserveToken(tok); err != nil {
		t.Fatal(err)
	}
	a.Settle("t", true, "c", day, 0.6)
	if err := b.ReserveToken(tok); err != nil {
		t.Fatalf("B before A's spend is written: %v", err)
	}
	b.Settle("t", true, "c", day, 0.3)
	if !a.flush(ctx) || !b.flush(ctx) {
		t.Fatal("flush failed")
	}
	a.refresh(ctx)
	b.refresh(ctx)
	for name, l := range map[string]*Ledger{"A": a, "B": b} {
		if got := l.tokens["t"].total; got < 0.9-1e-9 || got > 0.9+1e-9 {
			t.Errorf("%s sees the token at $%v, want $0.9 (both instances)", name, got)
		}
		if l.ChannelOver(ch, day) {
			t.Errorf("%s: channel over at $0.9 of $1", name)
		}
	}

	// A's database goes away: its spend waits, its view stays.
	fa.down = true
	a.ReserveToken(tok)
	a.Settle("t", true, "c", day, 0.2)
	if a.flush(ctx) {
		t.Fatal("flush reported success with the database down")
	}
	if err := a.ReserveToken(tok); err == nil {
		t.Error("A let the token past its limit during the outage ($1.1 known)")
	}
	b.refresh(ctx)
	if b.tokens["t"].total > 0.9+1e-9 {
		t.Errorf("B sees $%v before A could write", b.tokens["t"].total)
	}
	fa.down = false
	if !a.flush(ctx) {
		t.Fatal("flush failed after the outage")
	}
	b.refresh(ctx)
	if got := b.tokens["t"].total; got < 1.1-1e-9 || got > 1.1+1e-9 {
		t.Errorf("B sees $%v after the outage, want $1.1", got)
	}
	if err := b.ReserveToken(tok); err == nil {
		t.Error("B let the token past its limit after A's spend arrived")
	}
	if !b.ChannelOver(ch, day) {
		t.Error("B: channel not over at $1.1 of $1")
	}
}
