package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"ccload/config"
	"ccload/pricing"
	"ccload/protocol/convert"
	"ccload/store"
)

// CostStore is what the cost ledger reads at start: lifetime token cost and
// a channel's cost today, from the usage_daily aggregates.
type CostStore interface {
	TokenCost(ctx context.Context, token string) (float64, error)
	ChannelCostOn(ctx context.Context, channel, day string) (float64, error)
}

// Prices returns the price table requests on snap are priced with: the
// embedded table, the price catalog's current copy on top, and the file's
// `pricing:` entries on top of both. It is built once per snapshot and
// catalog copy.
func (e *Engine) Prices(snap *config.Snapshot) *pricing.Table {
	var cat *pricing.Table
	if e.catalog != nil {
		cat = e.catalog.Prices()
	}
	if b := e.prices.Load(); b != nil && b.snap == snap && b.cat == cat {
		return b.table // every request asks: no lock on the common path
	}
	over := make(map[string]pricing.Price, len(snap.Pricing))
	for name, p := range snap.Pricing {
		over[name] = pricing.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}
	}
	b := &priceBuild{snap: snap, cat: cat, table: pricing.Default().WithCatalog(cat).With(over)}
	e.prices.Store(b) // two builders racing both build the same table; either may stay
	return b.table
}

// priceBuild is the price table built for one snapshot and catalog copy.
type priceBuild struct {
	snap  *config.Snapshot
	cat   *pricing.Table
	table *pricing.Table
}

// cost prices one request's usage on the model that was sent upstream, or,
// when that name has no price (a relay's renamed variant), on the model
// the client asked for; with the channel's cost_multiplier. An unknown
// model costs 0 with unpriced true, so its row is flagged rather than
// silently free, and it is reported once per model in the log.
func (e *Engine) cost(snap *config.Snapshot, channel, upstreamModel, clientModel string, u convert.Usage) (usd float64, unpriced bool) {
	if u.Input == 0 && u.Output == 0 {
		return 0, false
	}
	mult := 1.0
	if ch := snap.Channel(channel); ch != nil {
		mult = ch.CostMultiplier
	}
	pu := pricing.Usage{
		Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, Reasoning: u.Reasoning,
		CacheWrite: u.CacheWrite - u.CacheWrite1h, CacheWrite1h: u.CacheWrite1h, // 5-minute and 1-hour writes apart
		ServiceTier: u.ServiceTier,
	}
	table := e.Prices(snap)
	c := table.Cost(upstreamModel, pu, mult)
	if !c.Known && clientModel != "" && clientModel != upstreamModel {
		c = table.Cost(clientModel, pu, mult)
	}
	if !c.Known {
		if _, seen := e.unpriced.LoadOrStore(upstreamModel, true); !seen {
			e.log.Warn("no price for model; its requests are logged as unpriced with cost 0 (add it under pricing: in the config)", "model", upstreamModel)
		}
		return 0, true
	}
	return c.USD, false
}

// ledger keeps the spend that cost limits are checked against: lifetime
// cost per token and today's cost per channel. It starts from the
// database's aggregates and adds each finished request; in-flight requests
// are reserved at the token's recent average cost, so a burst cannot
// overshoot a limit by more than about one request per concurrent slot.
type ledger struct {
	mu       sync.Mutex
	st       CostStore
	tokens   map[string]*spend
	channels map[string]*spend // key: channel + "\x00" + day
}

type spend struct {
	total    float64
	avg      float64 // EWMA of one request's cost
	inflight int
}

func newLedger(st CostStore) *ledger {
	return &ledger{st: st, tokens: map[string]*spend{}, channels: map[string]*spend{}}
}

func (l *ledger) token(name string) *spend {
	s, ok := l.tokens[name]
	if !ok {
		s = &spend{}
		if l.st != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			s.total, _ = l.st.TokenCost(ctx, name) // an outage counts as 0: limits fail open, the proxy keeps serving
			cancel()
		}
		l.tokens[name] = s
	}
	return s
}

func (l *ledger) channel(name string, day string) *spend {
	k := name + "\x00" + day
	s, ok := l.channels[k]
	if !ok {
		s = &spend{}
		if l.st != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			s.total, _ = l.st.ChannelCostOn(ctx, name, day)
			cancel()
		}
		l.channels[k] = s
	}
	return s
}

// reserveToken admits a request against the token's cost_limit.
func (l *ledger) reserveToken(t *config.Token) error {
	if t.CostLimit <= 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.token(t.Name)
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
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.channel(ch.Name, day)
	return s.total+float64(s.inflight)*s.avg >= ch.DailyCostLimit
}

// settle books a finished request's cost.
func (l *ledger) settle(token string, reserved bool, channel, day string, usd float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.tokens[token]; ok || usd > 0 {
		if !ok {
			s = l.token(token)
		}
		if reserved && s.inflight > 0 {
			s.inflight--
		}
		s.total += usd
		s.avg = 0.8*s.avg + 0.2*usd
	}
	if channel != "" && usd > 0 {
		s := l.channel(channel, day)
		s.total += usd
		s.avg = 0.8*s.avg + 0.2*usd
	}
}

var _ CostStore = store.Store(nil)
