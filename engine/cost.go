package engine

import (
	"context"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/pricing"
	"github.com/ccload/ccload/protocol/convert"
	"github.com/ccload/ccload/store"
)

// CostStore is what the cost ledger reads at start: lifetime token cost and
// a channel's cost today, from the usage_daily aggregates.
type CostStore interface {
	TokenCost(ctx context.Context, token string) (float64, error)
	ChannelCostOn(ctx context.Context, channel, day string) (float64, error)
}

// Prices returns the price table requests on snap are priced with: the
// embedded table, the price catalog's current copy on top, and the file's
// `pricing:` entries on top of both. It is built with the snapshot's view
// and again when the catalog's copy changes.
func (e *Engine) Prices(snap *config.Snapshot) *pricing.Table {
	return e.view(snap).priceTable(e.catalogPrices())
}

// catalogPrices is the price catalog's current copy, or nil.
func (e *Engine) catalogPrices() *pricing.Table {
	if e.catalog == nil {
		return nil
	}
	return e.catalog.Prices()
}

// priceTable is the view's table over the catalog copy cat.
func (v *snapView) priceTable(cat *pricing.Table) *pricing.Table {
	if b := v.prices.Load(); b != nil && b.cat == cat {
		return b.table // every request asks: no lock on the common path
	}
	b := &priceBuild{cat: cat, table: pricing.Default().WithCatalog(cat).With(v.over)}
	v.prices.Store(b) // two builders racing both build the same table; either may stay
	return b.table
}

// priceBuild is the price table built over one catalog copy.
type priceBuild struct {
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
		if _, seen := e.reg.unpriced.loadOrStore(upstreamModel, true); !seen {
			e.log.Warn("no price for model; its requests are logged as unpriced with cost 0 (add it under pricing: in the config)", "model", upstreamModel)
		}
		return 0, true
	}
	return c.USD, false
}

var _ CostStore = store.Store(nil)
