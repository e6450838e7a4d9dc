package engine

import (
	"fmt"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/pricing"
	"github.com/ccload/ccload/protocol/convert"
)

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

// Unpriced models and cost limits. A request for a model with no
// price is logged with cost 0, so a cost limit cannot hold it back: a token
// with cost_limit, or a channel with daily_cost_limit, could spend without
// bound. Unless routing.unpriced is "allow", such routes are dropped before
// the attempt loop, and a request left with none is refused with a 403 that
// says which model and which limit.
//
// A relayed answer whose usage ccload does not read (request.unbooked:
// speech audio, a streamed image or transcription) has an unknown cost
// too, whatever the model's price: it is refused and flagged the same way.

// priced reports whether requests on rt get a price: the name sent upstream
// has one, or else the name the client asked for does (as cost falls back).
func priced(table *pricing.Table, rt config.Route) bool {
	if _, ok := table.Lookup(rt.Upstream); ok {
		return true
	}
	_, ok := table.Lookup(rt.Model)
	return ok
}

// pricedRoutes drops the routes whose model has no price when a cost limit
// applies to them: every route when the token has a cost_limit, else the
// routes to channels with a daily_cost_limit. It returns routes itself when
// nothing is dropped.
func (e *Engine) pricedRoutes(r *request, routes []config.Route) ([]config.Route, *clientError) {
	if r.snap.Routing.Unpriced == config.UnpricedAllow {
		return routes, nil
	}
	table := e.Prices(r.snap)
	limited := func(rt config.Route) bool { return r.token.CostLimit > 0 || rt.Channel.DailyCostLimit > 0 }
	var out []config.Route
	var dropped *config.Route
	for i, rt := range routes {
		if !limited(rt) || priced(table, rt) && !r.unbooked {
			if dropped != nil {
				out = append(out, rt)
			}
			continue
		}
		if dropped == nil {
			dropped = &routes[i]
			out = append(make([]config.Route, 0, len(routes)), routes[:i]...)
		}
	}
	if dropped == nil {
		return routes, nil
	}
	if len(out) > 0 {
		return out, nil
	}
	const fix = "add a price for it under pricing: in the config, or set routing.unpriced: allow"
	if r.unbooked {
		what := fmt.Sprintf("token %q's cost_limit of $%.2f", r.token.Name, r.token.CostLimit)
		if r.token.CostLimit <= 0 {
			what = fmt.Sprintf("channel %q's daily_cost_limit of $%.2f", dropped.Channel.Name, dropped.Channel.DailyCostLimit)
		}
		return nil, &clientError{Status: 403, Msg: fmt.Sprintf(
			"%s answers (audio, or a stream relayed as it is) carry no usage ccload reads, so %s cannot be enforced; ask without \"stream\" where the endpoint allows it, or set routing.unpriced: allow",
			r.passPath(), what)}
	}
	if r.token.CostLimit > 0 {
		return nil, &clientError{Status: 403, Msg: fmt.Sprintf(
			"model %q has no price, so token %q's cost_limit of $%.2f cannot be enforced; %s",
			r.model, r.token.Name, r.token.CostLimit, fix)}
	}
	return nil, &clientError{Status: 403, Msg: fmt.Sprintf(
		"model %q has no price, so channel %q's daily_cost_limit of $%.2f cannot be enforced; %s",
		r.model, dropped.Channel.Name, dropped.Channel.DailyCostLimit, fix)}
}

// UnpricedModels lists, in file order, the enabled models of ch that table
// cannot price (neither the upstream name nor the client-visible name has
// a price). Requests for them are logged as unpriced, or refused where a
// cost limit applies.
func UnpricedModels(table *pricing.Table, ch *config.Channel) []string {
	var out []string
	for _, m := range ch.Models {
		if m.Disabled {
			continue
		}
		if !priced(table, config.Route{Channel: ch, Model: m.Name, Upstream: m.Upstream}) {
			out = append(out, m.Name)
		}
	}
	return out
}
