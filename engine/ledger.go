package engine

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

// ledger keeps the spend that cost limits are checked against: lifetime
// cost per token and today's cost per channel. Each entity starts from the
// database's aggregates (usage_daily, which the log writer keeps and a
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
type ledger struct {
	st    CostStore
	clock clock.Clock
	log   *slog.Logger

	// spendSt receives every request's cost (spend.go); nil = not kept.
	// With shareSpend, totals come from it instead of st.
	spendSt    SpendStore
	shareSpend bool
	spendDown  bool // the last write failed (RunSpend's goroutine only)

	mu       sync.Mutex
	tokens   map[string]*spend
	channels map[string]*spend // by channel name: the totals of day, the only day kept
	day      string
	pending  map[spendKey]float64 // spent here, not written to spendSt yet
}

const (
	loadTimeout = 2 * time.Second
	loadRetry   = 5 * time.Second
)

type spend struct {
	total    float64 // base from the database (once loaded) plus spend settled here
	avg      float64 // EWMA of one request's cost
	inflight int

	loaded  bool          // the database's base is in total
	loading chan struct{} // closed when the load under way ends; nil when none is
	retryAt time.Time     // no load before then, after a failure
}

func newLedger(st CostStore, clk clock.Clock, log *slog.Logger) *ledger {
	return &ledger{st: st, clock: clk, log: log, tokens: map[string]*spend{}, channels: map[string]*spend{},
		pending: map[spendKey]float64{}}
}

// ensure returns the entity's spend, loading its base from the database
// first if it is not loaded yet. It takes and releases l.mu itself and
// returns with it released.
func (l *ledger) ensure(m map[string]*spend, key string, load func(context.Context) (float64, error)) *spend {
	l.mu.Lock()
	s, ok := m[key]
	if !ok {
		s = &spend{loaded: l.st == nil && !l.shareSpend}
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

func (l *ledger) token(name string) *spend {
	if l.shareSpend {
		return l.ensure(l.tokens, name, func(ctx context.Context) (float64, error) {
			return l.sharedBase(ctx, spendKey{store.SpendToken, name, ""})
		})
	}
	return l.ensure(l.tokens, name, func(ctx context.Context) (float64, error) { return l.st.TokenCost(ctx, name) })
}

func (l *ledger) channel(name, day string) *spend {
	l.mu.Lock()
	if day != l.day { // a new day: yesterday's channel totals are no longer limits
		l.day, l.channels = day, map[string]*spend{}
	}
	m := l.channels
	l.mu.Unlock()
	if l.shareSpend {
		return l.ensure(m, name, func(ctx context.Context) (float64, error) {
			return l.sharedBase(ctx, spendKey{store.SpendChannel, name, day})
		})
	}
	return l.ensure(m, name, func(ctx context.Context) (float64, error) { return l.st.ChannelCostOn(ctx, name, day) })
}

// reserveToken admits a request against the token's cost_limit.
func (l *ledger) reserveToken(t *config.Token) error {
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

// channelOver reports whether a channel reached its daily_cost_limit.
func (l *ledger) channelOver(ch *config.Channel, day string) bool {
	if ch.DailyCostLimit <= 0 {
		return false
	}
	s := l.channel(ch.Name, day)
	l.mu.Lock()
	defer l.mu.Unlock()
	return s.total+float64(s.inflight)*s.avg >= ch.DailyCostLimit
}

// settle books a finished request's cost on the entities that have a limit
// (those the ledger knows); it never reads the database.
func (l *ledger) settle(token string, reserved bool, channel, day string, usd float64) {
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

// sweep forgets the spend of tokens and channels a reload removed; a
// re-added one reloads its base from the database.
func (l *ledger) sweep(tokens map[string]bool, channels map[string]*config.Channel) {
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
