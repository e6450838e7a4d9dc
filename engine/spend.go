package engine

import (
	"context"
	"time"

	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/store"
)

// Shared spend (storage.shared). Every finished request's cost
// is added to pending in memory (settle) and written to shared_spend by
// RunSpend every SpendEvery, one transaction of atomic increments per
// flush, off the request path. With storage.shared the ledger then reads
// the totals back, so each instance's view of a token's or a channel's
// spend is the cluster's: the database's total plus what this instance
// spent and has not written yet. Without storage.shared the increments
// are still written (so that turning it on later starts from the right
// totals) but limits keep counting from usage_daily as before.
//
// How far a limit can be overshot across the cluster: by the requests
// already in flight when it is reached (each instance reserves them at the
// entity's average cost, but cannot see the others'), plus what the other
// instances spend in the time it takes a cost to reach everyone: up to one
// SpendEvery on the instance that spent it and one on the instance that
// reads it, so about 2×SpendEvery (0.6 s) of traffic.

// SpendStore is where spend is shared: store.Shared's spend half.
type SpendStore interface {
	AddSpend(ctx context.Context, ds []store.Spend) error
	SpendTotals(ctx context.Context, day string) ([]store.Spend, error)
}

// SpendEvery is how often RunSpend writes and (shared) reads spend.
const SpendEvery = 300 * time.Millisecond

// spendKey is one shared_spend row.
type spendKey struct{ kind, name, day string }

// addPending notes usd spent on a token and a channel, to be written. It
// is called with l.mu held.
func (l *ledger) addPending(token, channel, day string, usd float64) {
	if l.spendSt == nil || usd == 0 {
		return
	}
	if token != "" {
		l.pending[spendKey{store.SpendToken, token, ""}] += usd
	}
	if channel != "" {
		l.pending[spendKey{store.SpendChannel, channel, day}] += usd
	}
}

// RunSpend writes the spend of this instance and, with storage.shared,
// refreshes the totals, every SpendEvery until ctx ends; then it writes
// once more. Without a spend store it returns at once.
func (e *Engine) RunSpend(ctx context.Context) {
	l := e.reg.ledger
	if l.spendSt == nil {
		return
	}
	tick := time.NewTicker(SpendEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			l.flushSpend(fctx)
			cancel()
			return
		case <-tick.C:
			tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if l.flushSpend(tctx) && l.shareSpend {
				l.refreshSpend(tctx)
			}
			cancel()
		}
	}
}

// flushSpend writes the pending increments in one transaction. When that
// fails (the database is down) they go back to pending and are written
// with the next flush: nothing is lost, and the request path never waits.
// It reports whether the database answered.
func (l *ledger) flushSpend(ctx context.Context) bool {
	l.mu.Lock()
	batch := l.pending
	if len(batch) == 0 {
		l.mu.Unlock()
		return true
	}
	l.pending = map[spendKey]float64{}
	l.mu.Unlock()

	ds := make([]store.Spend, 0, len(batch))
	for k, usd := range batch {
		ds = append(ds, store.Spend{Kind: k.kind, Name: k.name, Day: k.day, USD: usd})
	}
	err := l.spendSt.AddSpend(ctx, ds)
	if err == nil {
		if l.spendDown {
			l.spendDown = false
			l.log.Info("shared spend: the database answers again; pending spend written")
		}
		return true
	}
	l.mu.Lock()
	for k, usd := range batch {
		l.pending[k] += usd
	}
	l.mu.Unlock()
	if !l.spendDown {
		l.spendDown = true
		l.log.Warn("shared spend: cannot write spend to the database; limits count from the last known totals plus this instance's spend until it answers",
			"err", err)
	}
	return false
}

// refreshSpend replaces each known entity's total with the database's
// plus this instance's unwritten spend. It runs right after a successful
// flush, on the same goroutine, so the database's total already holds
// everything this instance wrote.
func (l *ledger) refreshSpend(ctx context.Context) {
	l.mu.Lock()
	day := l.day
	l.mu.Unlock()
	if day == "" {
		day = clock.UTCDay(l.clock.Now())
	}
	rows, err := l.spendSt.SpendTotals(ctx, day)
	if err != nil {
		return // keep the last known totals; the next tick retries
	}
	db := make(map[spendKey]float64, len(rows))
	for _, r := range rows {
		db[spendKey{r.Kind, r.Name, r.Day}] = r.USD
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for name, s := range l.tokens {
		k := spendKey{store.SpendToken, name, ""}
		s.total, s.loaded = db[k]+l.pending[k], true
	}
	if day == l.day {
		for name, s := range l.channels {
			k := spendKey{store.SpendChannel, name, day}
			s.total, s.loaded = db[k]+l.pending[k], true
		}
	}
}

// sharedBase loads one entity's total from shared_spend (storage.shared).
func (l *ledger) sharedBase(ctx context.Context, k spendKey) (float64, error) {
	rows, err := l.spendSt.SpendTotals(ctx, k.day)
	if err != nil {
		return 0, err
	}
	for _, r := range rows {
		if r.Kind == k.kind && r.Name == k.name && r.Day == k.day {
			return r.USD, nil
		}
	}
	return 0, nil
}
