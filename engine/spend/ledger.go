// Package spend keeps the spend that cost limits are checked against:
// lifetime cost per token (cost_limit) and today's cost per channel
// (daily_cost_limit). The request path asks a Ledger through
// ReserveToken, ChannelOver and Settle, which work in memory once an
// entity is loaded; Run, a loop off the request path, writes every
// request's cost to the shared spend store and, with storage.shared,
// reads the cluster's totals back.
package spend

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/store"
)

// CostStore is what the ledger reads an entity's spend from when it first
// needs it: lifetime token cost and a channel's cost on a day, from the
// usage_daily aggregates.
type CostStore interface {
	TokenCost(ctx context.Context, token string) (float64, error)
	ChannelCostOn(ctx context.Context, channel, day string) (float64, error)
}

var _ CostStore = store.Store(nil)

// SharedStore is where spend is shared: store.Shared's spend half.
type SharedStore interface {
	AddSpend(ctx context.Context, ds []store.Spend) error
	SpendTotals(ctx context.Context, day string) ([]store.Spend, error)
}

// Every is how often Run writes and (shared) reads spend.
const Every = 300 * time.Millisecond

// Options are a Ledger's stores, clock and log.
type Options struct {
	// Costs gives each entity's spend before this process; nil = every
	// entity starts at $0.
	Costs CostStore
	// Shared receives every request's cost (Run); nil = not kept.
	Shared SharedStore
	// Share takes the totals from Shared instead of Costs
	// (storage.shared); it needs Shared.
	Share bool
	Clock clock.Clock
	Log   *slog.Logger
}

// Ledger keeps the spend of tokens and channels. Each entity starts from
// the database's aggregates (usage_daily, which the log writer keeps and a
// graceful shutdown drains, so spend carries across restarts) and adds each
// finished request; in-flight requests are reserved at the entity's recent
// average cost, so a burst cannot overshoot a limit by more than about one
// request per concurrent slot.
//
// The database is read outside the ledger's lock: the first request that
// needs an entity loads it, requests for the same entity wait for that load
// (at most loadTimeout), and requests for other entities never wait. A
// failed load is not remembered as $0: the entity counts only this
// process's spend (limits fail open, the proxy keeps serving) and the load
// is tried again after loadRetry.
type Ledger struct {
	st    CostStore
	clock clock.Clock
	log   *slog.Logger

	// spendSt receives every request's cost; nil = not kept. With
	// shareSpend, totals come from it instead of st.
	spendSt    SharedStore
	shareSpend bool
	spendDown  bool // the last write failed (Run's goroutine only)

	mu       sync.Mutex
	tokens   map[string]*entity
	channels map[string]*entity // by channel name: the totals of day, the only day kept
	day      string
	pending  map[rowKey]float64 // spent here, not written to spendSt yet
}

const (
	loadTimeout = 2 * time.Second
	loadRetry   = 5 * time.Second
)

// entity is the spend of one token or one channel.
type entity struct {
	total    float64 // base from the database (once loaded) plus spend settled here
	avg      float64 // EWMA of one request's cost
	inflight int

	loaded  bool          // the database's base is in total
	loading chan struct{} // closed when the load under way ends; nil when none is
	retryAt time.Time     // no load before then, after a failure
}

// New returns an empty ledger; entities are loaded as requests need them.
func New(o Options) *Ledger {
	return &Ledger{st: o.Costs, clock: o.Clock, log: o.Log,
		spendSt: o.Shared, shareSpend: o.Share && o.Shared != nil,
		tokens: map[string]*entity{}, channels: map[string]*entity{}, pending: map[rowKey]float64{}}
}

// ensure returns the entity's spend, loading its base from the database
// first if it is not loaded yet. It takes and releases l.mu itself and
// returns with it released.
func (l *Ledger) ensure(m map[string]*entity, key string, load func(context.Context) (float64, error)) *entity {
	l.mu.Lock()
	s, ok := m[key]
	if !ok {
		s = &entity{loaded: l.st == nil && !l.shareSpend}
		m[key] = s
	}
	if s.loaded {
		l.mu.Unlock()
		return s
	}
	if wait := s.loading; wait != nil {
		l.mu.Unlock()
		select {
		case <-wait:
		case <-time.After(loadTimeout):
		}
		return s
	}
	if l.clock.Now().Before(s.retryAt) {
		l.mu.Unlock()
		return s
	}
	done := make(chan struct{})
	s.loading = done
	l.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	base, err := load(ctx)
	cancel()

	l.mu.Lock()
	if err != nil {
		s.retryAt = l.clock.Now().Add(loadRetry)
		l.log.Warn("cost ledger: could not read spend from the database; counting only this process's spend until a retry succeeds",
			"entity", key, "retry_in", loadRetry, "err", err)
	} else {
		s.total += base
		s.loaded = true
	}
	s.loading = nil
	close(done)
	l.mu.Unlock()
	return s
}

func (l *Ledger) token(name string) *entity {
	if l.shareSpend {
		return l.ensure(l.tokens, name, func(ctx context.Context) (float64, error) {
			return l.sharedBase(ctx, rowKey{store.SpendToken, name, ""})
		})
	}
	return l.ensure(l.tokens, name, func(ctx context.Context) (float64, error) { return l.st.TokenCost(ctx, name) })
}

func (l *Ledger) channel(name, day string) *entity {
	l.mu.Lock()
	if day != l.day { // a new day: yesterday's channel totals are no longer limits
		l.day, l.channels = day, map[string]*entity{}
	}
	m := l.channels
	l.mu.Unlock()
	if l.shareSpend {
		return l.ensure(m, name, func(ctx context.Context) (float64, error) {
			return l.sharedBase(ctx, rowKey{store.SpendChannel, name, day})
		})
	}
	return l.ensure(m, name, func(ctx context.Context) (float64, error) { return l.st.ChannelCostOn(ctx, name, day) })
}

// ReserveToken admits a request against the token's cost_limit: it returns
// an error that says what the token spent when the limit is reached, else
// counts the request in flight until Settle (with reserved true).
func (l *Ledger) ReserveToken(t *config.Token) error {
	if t.CostLimit <= 0 {
		return nil
	}
	s := l.token(t.Name)
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.total+float64(s.inflight)*s.avg >= t.CostLimit {
		return fmt.Errorf("token %q has spent $%.4f of its cost_limit of $%.2f", t.Name, s.total, t.CostLimit)
	}
	s.inflight++
	return nil
}

// ChannelOver reports whether a channel reached its daily_cost_limit on
// day (a UTC date, clock.UTCDay).
func (l *Ledger) ChannelOver(ch *config.Channel, day string) bool {
	if ch.DailyCostLimit <= 0 {
		return false
	}
	s := l.channel(ch.Name, day)
	l.mu.Lock()
	defer l.mu.Unlock()
	return s.total+float64(s.inflight)*s.avg >= ch.DailyCostLimit
}

// Settle books a finished request's cost on the entities that have a limit
// (those the ledger knows), releases the token's reservation (reserved),
// and notes the cost for the shared spend store; it never reads the
// database.
func (l *Ledger) Settle(token string, reserved bool, channel, day string, usd float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addPending(token, channel, day, usd)
	if s, ok := l.tokens[token]; ok {
		if reserved && s.inflight > 0 {
			s.inflight--
		}
		s.total += usd
		s.avg = 0.8*s.avg + 0.2*usd
	}
	if s, ok := l.channels[channel]; ok && day == l.day {
		s.total += usd
		s.avg = 0.8*s.avg + 0.2*usd
	}
}

// Sweep forgets the spend of tokens and channels a reload removed; a
// re-added one reloads its base from the database.
func (l *Ledger) Sweep(tokens map[string]bool, channels map[string]*config.Channel) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for name := range l.tokens {
		if !tokens[name] {
			delete(l.tokens, name)
		}
	}
	for name := range l.channels {
		if channels[name] == nil {
			delete(l.channels, name)
		}
	}
}

// Known lists the tokens and the channels whose spend the ledger holds,
// in no order: what Sweep keeps.
func (l *Ledger) Known() (tokens, channels []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for name := range l.tokens {
		tokens = append(tokens, name)
	}
	for name := range l.channels {
		channels = append(channels, name)
	}
	return tokens, channels
}

// Shared spend (storage.shared). Every finished request's cost
// is added to pending in memory (Settle) and written to shared_spend by
// Run every Every, one transaction of atomic increments per
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
// Every on the instance that spent it and one on the instance that
// reads it, so about 2×Every (0.6 s) of traffic.

// rowKey is one shared_spend row.
type rowKey struct{ kind, name, day string }

// addPending notes usd spent on a token and a channel, to be written. It
// is called with l.mu held.
func (l *Ledger) addPending(token, channel, day string, usd float64) {
	if l.spendSt == nil || usd == 0 {
		return
	}
	if token != "" {
		l.pending[rowKey{store.SpendToken, token, ""}] += usd
	}
	if channel != "" {
		l.pending[rowKey{store.SpendChannel, channel, day}] += usd
	}
}

// Run writes the spend of this instance and, with storage.shared,
// refreshes the totals, every Every until ctx ends; then it writes
// once more. Without a shared spend store it returns at once.
func (l *Ledger) Run(ctx context.Context) {
	if l.spendSt == nil {
		return
	}
	tick := time.NewTicker(Every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			l.flush(fctx)
			cancel()
			return
		case <-tick.C:
			tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if l.flush(tctx) && l.shareSpend {
				l.refresh(tctx)
			}
			cancel()
		}
	}
}

// flush writes the pending increments in one transaction. When that
// fails (the database is down) they go back to pending and are written
// with the next flush: nothing is lost, and the request path never waits.
// It reports whether the database answered.
func (l *Ledger) flush(ctx context.Context) bool {
	l.mu.Lock()
	batch := l.pending
	if len(batch) == 0 {
		l.mu.Unlock()
		return true
	}
	l.pending = map[rowKey]float64{}
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

// refresh replaces each known entity's total with the database's
// plus this instance's unwritten spend. It runs right after a successful
// flush, on the same goroutine, so the database's total already holds
// everything this instance wrote.
func (l *Ledger) refresh(ctx context.Context) {
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
	db := make(map[rowKey]float64, len(rows))
	for _, r := range rows {
		db[rowKey{r.Kind, r.Name, r.Day}] = r.USD
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for name, s := range l.tokens {
		k := rowKey{store.SpendToken, name, ""}
		s.total, s.loaded = db[k]+l.pending[k], true
	}
	if day == l.day {
		for name, s := range l.channels {
			k := rowKey{store.SpendChannel, name, day}
			s.total, s.loaded = db[k]+l.pending[k], true
		}
	}
}

// sharedBase loads one entity's total from shared_spend (storage.shared).
func (l *Ledger) sharedBase(ctx context.Context, k rowKey) (float64, error) {
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
