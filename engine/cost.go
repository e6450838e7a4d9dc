package engine

import (
	"context"

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

// prices returns the price table for a snapshot: the embedded table with
// the file's `pricing:` entries on top, built once per snapshot.
func (e *Engine) prices(snap *config.Snapshot) *pricing.Table {
	e.priceMu.Lock()
	defer e.priceMu.Unlock()
	if e.priceSnap == snap {
		return e.priceTable
	}
	over := make(map[string]pricing.Price, len(snap.Pricing))
	for name, p := range snap.Pricing {
		over[name] = pricing.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}
	}
	e.priceSnap, e.priceTable = snap, pricing.Default().With(over)
	return e.priceTable
}

// cost prices one request's usage on the model that was sent upstream, with
// the channel's cost_multiplier. An unknown model costs 0 and is reported
// once per model in the log, so the operator sees the price is missing
// rather than a guess.
func (e *Engine) cost(snap *config.Snapshot, channel, model string, u convert.Usage) float64 {
	if u.Input == 0 && u.Output == 0 {
		return 0
	}
	mult := 1.0
	if ch := snap.Channel(channel); ch != nil {
		mult = ch.CostMultiplier
	}
	c := e.prices(snap).Cost(model, pricing.Usage{
		Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, Reasoning: u.Reasoning,
		CacheWrite: u.CacheWrite - u.CacheWrite1h, CacheWrite1h: u.CacheWrite1h, // 5-minute and 1-hour writes apart
		ServiceTier: u.ServiceTier,
	}, mult)
	if !c.Known {
		if _, seen := e.unpriced.LoadOrStore(model, true); !seen {
			e.log.Warn("no price for model; its requests are logged with cost 0 (add it under pricing: in the config)", "model", model)
		}
	}
	return c.USD
}

var _ CostStore = store.Store(nil)
