package pricing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// The models.dev catalog (https://models.dev/api.json) maps provider ids to
// providers, each with a "models" object that maps model ids to models. A
// model's "cost" is in USD per million tokens:
//
//	{"deepseek": {"id": "deepseek", "models": {"deepseek-chat": {"id": "deepseek-chat",
//	  "cost": {"input": 0.28, "output": 0.42, "cache_read": 0.028,
//	           "cache_write": 0.28, "context_over_200k": {...},
//	           "tiers": [{"tier": {"type": "context", "size": 200000}, "input": ..., "output": ...}]}}}}}
//
// Only the fields below are read; everything else in the file (limits,
// modalities, release dates) is ignored, so new catalog fields never break
// the parser.
type catalogProvider struct {
	Models map[string]catalogModel `json:"models"`
}

type catalogModel struct {
	Cost *catalogCost `json:"cost"`
}

type catalogCost struct {
	Input           *float64      `json:"input"`
	Output          *float64      `json:"output"`
	CacheRead       *float64      `json:"cache_read"`
	CacheWrite      *float64      `json:"cache_write"`
	ContextOver200k *catalogCost  `json:"context_over_200k"`
	Tiers           []catalogTier `json:"tiers"`
}

type catalogTier struct {
	catalogCost
	Tier struct {
		Type string `json:"type"` // "context" (the default) is the only kind priced here
		Size int64  `json:"size"` // tier rates apply when the prompt is above this
	} `json:"tier"`
}

// firstParty lists the providers whose own price wins when several
// providers of the catalog list the same model id: the model's maker sells
// it at the list price, while resellers and relays add margins or
// discounts. Models no first-party provider lists take the price of the
// first provider in alphabetical order.
var firstParty = []string{
	"anthropic", "openai", "google", "deepseek", "alibaba", "zai", "zhipuai",
	"moonshotai", "minimax", "xai", "mistral",
}

// CatalogInfo describes a parsed catalog, for logs and status output.
type CatalogInfo struct {
	Providers int // provider entries in the file
	Models    int // model entries in the file, over all providers
	Priced    int // distinct model names the catalog prices
	Skipped   int // entries without a usable price (no cost, or input and output both 0)
}

// ParseCatalog reads a catalog in the models.dev api.json format and returns
// a Table of its prices, to be layered on the embedded table with
// WithCatalog.
//
// A file that is not a JSON object of providers, a provider or model of the
// wrong shape, a negative price, or a catalog that prices no model at all is
// an error: a damaged download must never replace a good copy. Entries
// without a cost, or whose input and output prices are both 0 (the catalog
// uses 0 for "free" and for "unknown" alike), are skipped and stay unpriced.
//
// Mapping to Price: input, output, cache_read and cache_write are taken as
// they are (cache_write is the 5-minute write for Anthropic models; an
// absent cache price bills those tokens as input); the
// lowest context tier ("tiers", or the older "context_over_200k" at 200K)
// becomes the long-context tier when its rates are at least the standard
// ones. Model ids are lower-cased; ids with a "provider/" prefix (as
// aggregators list them) are kept whole.
func ParseCatalog(data []byte) (*Table, CatalogInfo, error) {
	var info CatalogInfo
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, info, fmt.Errorf("catalog: want a JSON object of providers: %w", err)
	}
	if dec.More() {
		return nil, info, errors.New("catalog: trailing data after the top-level object")
	}
	ids := make([]string, 0, len(raw))
	for id := range raw {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if ra, rb := providerRank(a), providerRank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	t := &Table{prices: map[string]Price{}, origin: map[string]Origin{}}
	var errs []error
	for _, id := range ids {
		var p catalogProvider
		if err := json.Unmarshal(raw[id], &p); err != nil {
			errs = append(errs, fmt.Errorf("provider %q: %w", id, err))
			continue
		}
		info.Providers++
		models := make([]string, 0, len(p.Models))
		for m := range p.Models {
			models = append(models, m)
		}
		slices.Sort(models) // deterministic when one provider lists a name twice in two cases
		for _, m := range models {
			info.Models++
			price, ok, err := p.Models[m].price()
			if err != nil {
				errs = append(errs, fmt.Errorf("provider %q model %q: %w", id, m, err))
				continue
			}
			key := normalize(m)
			if !ok || key == "" {
				info.Skipped++
				continue
			}
			if _, dup := t.prices[key]; !dup {
				t.prices[key] = price
				t.origin[key] = OriginCatalog
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, info, fmt.Errorf("catalog: %w", err)
	}
	if info.Providers == 0 {
		return nil, info, errors.New("catalog: no providers")
	}
	if len(t.prices) == 0 {
		return nil, info, errors.New("catalog: no model has a price")
	}
	info.Priced = len(t.prices)
	return t, info, nil
}

func providerRank(id string) int {
	if i := slices.Index(firstParty, id); i >= 0 {
		return i
	}
	return len(firstParty)
}

// price turns a catalog model into a Price; ok is false when the model has
// no usable price.
func (m catalogModel) price() (Price, bool, error) {
	c := m.Cost
	if c == nil {
		return Price{}, false, nil
	}
	if err := c.check(); err != nil {
		return Price{}, false, err
	}
	in, out := val(c.Input), val(c.Output)
	if in == 0 && out == 0 {
		return Price{}, false, nil
	}
	// A cache price the catalog does not state bills those tokens as input,
	// like the embedded table: never less than the provider may charge. A
	// stated 0 (free cache storage, say) stays 0.
	p := Price{Input: in, Output: out, CacheRead: valOr(c.CacheRead, in), CacheWrite: valOr(c.CacheWrite, in)}
	for _, tier := range c.Tiers {
		if err := tier.check(); err != nil {
			return Price{}, false, fmt.Errorf("tiers: %w", err)
		}
	}
	if threshold, long, ok := c.longTier(); ok && val(long.Input) >= in && val(long.Output) >= out {
		p.LongContextThreshold, p.LongInput, p.LongOutput = threshold, val(long.Input), val(long.Output)
	}
	return p, true, nil
}

// longTier is the lowest context tier above 0 tokens.
func (c *catalogCost) longTier() (int64, *catalogCost, bool) {
	var best *catalogTier
	for i := range c.Tiers {
		t := &c.Tiers[i]
		if (t.Tier.Type == "" || t.Tier.Type == "context") && t.Tier.Size > 0 && (best == nil || t.Tier.Size < best.Tier.Size) {
			best = t
		}
	}
	if best != nil {
		return best.Tier.Size, &best.catalogCost, true
	}
	if c.ContextOver200k != nil {
		return 200_000, c.ContextOver200k, true
	}
	return 0, nil, false
}

// check rejects negative or non-finite prices.
func (c *catalogCost) check() error {
	for _, f := range []struct {
		name string
		v    *float64
	}{{"input", c.Input}, {"output", c.Output}, {"cache_read", c.CacheRead}, {"cache_write", c.CacheWrite}} {
		if f.v != nil && (*f.v < 0 || math.IsNaN(*f.v) || math.IsInf(*f.v, 0)) {
			return fmt.Errorf("%s price %v is negative", f.name, *f.v)
		}
	}
	if c.ContextOver200k != nil {
		if err := c.ContextOver200k.check(); err != nil {
			return fmt.Errorf("context_over_200k: %w", err)
		}
	}
	return nil
}

func valOr(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

func val(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
