package admin

import (
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/pricing"
)

// saving prices what cache reads saved: for n prompt tokens of model read
// from the provider's cache, the full input price less the cache-read
// price, at the price table's rates (list prices: a channel's
// cost_multiplier is not applied, and a model without a price saves 0).
type saving func(model string, n int64) float64

// cacheSaving returns the saving function for the serving snapshot's
// price table, or one that always answers 0 when the engine has none.
func (s *Server) cacheSaving() saving {
	pe, ok := s.eng.(interface {
		Prices(*config.Snapshot) *pricing.Table
	})
	if !ok {
		return func(string, int64) float64 { return 0 }
	}
	t := pe.Prices(s.cfg.Current())
	return func(model string, n int64) float64 {
		p, ok := t.Lookup(model)
		if !ok || n <= 0 {
			return 0
		}
		return float64(n) * max(p.Input-p.CacheRead, 0) / 1e6
	}
}
