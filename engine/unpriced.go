package engine

import (
	"fmt"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/pricing"
)

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
