package engine

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/store"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

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
	clk := &fakeClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	var mu sync.Mutex
	calls, down := 0, true
	l := newLedger(scriptedCosts{token: func(string) (float64, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if down {
			return 0, errors.New("database unreachable")
		}
		return 7, nil
	}}, clk, slog.New(slog.DiscardHandler))
	tok := &config.Token{Name: "t", CostLimit: 5}
	if err := l.reserveToken(tok); err != nil {
		t.Fatalf("while the database is down the limit fails open: %v", err)
	}
	mu.Lock()
	down = false
	mu.Unlock()
	if err := l.reserveToken(tok); err != nil || calls != 1 {
		t.Fatalf("before loadRetry: err %v, %d reads; want no new read yet", err, calls)
	}
	clk.Advance(loadRetry)
	if err := l.reserveToken(tok); err == nil || calls != 2 {
		t.Fatalf("after loadRetry: err %v, %d reads; want the $7 read again and the $5 limit refusing", err, calls)
	}
}

// TestLedgerReadsOutsideItsLock: while one token's spend is being read,
// requests of other tokens and channels go through.
func TestLedgerReadsOutsideItsLock(t *testing.T) {
	release := make(chan struct{})
	l := newLedger(scriptedCosts{token: func(name string) (float64, error) {
		if name == "slow" {
			<-release
		}
		return 0, nil
	}}, &fakeClock{t: time.Now()}, slog.New(slog.DiscardHandler))
	slowDone := make(chan error, 1)
	go func() { slowDone <- l.reserveToken(&config.Token{Name: "slow", CostLimit: 1}) }()
	if err := l.reserveToken(&config.Token{Name: "fast", CostLimit: 1}); err != nil {
		t.Fatal(err)
	}
	if l.channelOver(&config.Channel{Name: "c", DailyCostLimit: 1}, "2026-05-01") {
		t.Fatal("channel over its limit")
	}
	l.settle("fast", true, "c", "2026-05-01", 0.5)
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
	l := newLedger(st, &fakeClock{t: now}, slog.New(slog.DiscardHandler))
	if err := l.reserveToken(&config.Token{Name: "t", CostLimit: 1.25}); err == nil {
		t.Fatal("a fresh ledger let through a token that already spent $1.25 of $1.25")
	}
	if err := l.reserveToken(&config.Token{Name: "t", CostLimit: 1.3}); err != nil {
		t.Fatalf("$1.25 spent of $1.30: %v", err)
	}
	if !l.channelOver(&config.Channel{Name: "c", DailyCostLimit: 1.2}, now.Format(time.DateOnly)) {
		t.Fatal("channel spent $1.25 today, limit $1.20, not over")
	}
}
