package pricing

import (
	"maps"
	"strings"
)

// Table maps model names to prices. It is read-only once built and safe for
// concurrent use; With returns a new Table rather than changing this one.
type Table struct {
	prices map[string]Price  // lower-case model name -> price
	origin map[string]Origin // where each price came from; absent = OriginEmbedded
}

// Origin says which layer a price came from. The layers, highest first:
// the config file's `pricing:` entries, the price catalog, the embedded
// table.
type Origin string

// The price layers.
const (
	OriginEmbedded Origin = "embedded"
	OriginCatalog  Origin = "catalog"
	OriginConfig   Origin = "config"
)

// Cost is the price of one request.
type Cost struct {
	USD   float64 // 0 when the model is unknown
	Known bool    // false: no price for the model, USD is 0 and must be flagged, not trusted
	Model string  // the table entry that priced the request ("" when unknown)
	From  Origin  // the layer the entry came from ("" when unknown)
}

// With returns a new Table in which overrides, the `pricing:` entries of the
// config file, replace or add models. An override replaces the whole entry
// of that name (it does not inherit tiers or cache prices from it) and also
// prices the dated and -latest names that resolve to it. t is not changed.
// Names are matched case-insensitively.
func (t *Table) With(overrides map[string]Price) *Table {
	n := t.clone()
	for name, p := range overrides {
		if key := normalize(name); key != "" {
			n.prices[key] = p
			n.origin[key] = OriginConfig
		}
	}
	return n
}

// WithCatalog returns a new Table in which the prices of cat (from
// ParseCatalog) replace or add models; cat == nil returns t. The catalog
// cannot state two things the embedded table knows, so a catalog entry
// that replaces an embedded one keeps them from it: the priority
// service-tier multiplier, and the one-hour cache write price, scaled by
// the catalog's 5-minute write price over the embedded one (Anthropic
// prices both as fixed multiples of input). t and cat are not changed.
func (t *Table) WithCatalog(cat *Table) *Table {
	if cat == nil {
		return t
	}
	n := t.clone()
	for key, p := range cat.prices {
		if old, ok := t.prices[key]; ok {
			p.Priority = old.Priority
			if old.CacheWrite1h > 0 && old.CacheWrite > 0 && p.CacheWrite > 0 {
				p.CacheWrite1h = old.CacheWrite1h * p.CacheWrite / old.CacheWrite
			}
		}
		n.prices[key] = p
		n.origin[key] = OriginCatalog
	}
	return n
}

// Len is the number of model names the table prices.
func (t *Table) Len() int { return len(t.prices) }

// Origin returns the layer that prices model, or "" when no layer does.
func (t *Table) Origin(model string) Origin {
	key, _, ok := t.lookup(model)
	if !ok {
		return ""
	}
	return t.originOf(key)
}

func (t *Table) originOf(key string) Origin {
	if o, ok := t.origin[key]; ok {
		return o
	}
	return OriginEmbedded
}

func (t *Table) clone() *Table {
	n := &Table{prices: maps.Clone(t.prices), origin: maps.Clone(t.origin)}
	if n.prices == nil {
		n.prices = map[string]Price{}
	}
	if n.origin == nil {
		n.origin = map[string]Origin{}
	}
	return n
}

// Lookup returns the price of model and whether the table knows it. See the
// package documentation for how names resolve.
func (t *Table) Lookup(model string) (Price, bool) {
	_, p, ok := t.lookup(model)
	return p, ok
}

// Cost prices one request of model with usage u on a channel whose
// cost_multiplier is multiplier (negative counts as 0). An unknown model
// costs 0 with Known false: the caller records that the price is missing
// rather than inventing one.
func (t *Table) Cost(model string, u Usage, multiplier float64) Cost {
	key, p, ok := t.lookup(model)
	if !ok {
		return Cost{}
	}
	return Cost{USD: p.usd(u) * max(multiplier, 0), Known: true, Model: key, From: t.originOf(key)}
}

// lookup resolves model to the key of its entry and the entry's price. It
// does not allocate unless model has upper-case letters.
func (t *Table) lookup(model string) (string, Price, bool) {
	name := normalize(model)
	// Longest first: the whole name (stamp ""), then each shorter prefix
	// that ends where a separator starts the rest.
	for i := len(name); i > 0; i-- {
		if i < len(name) && !isSep(name[i]) {
			continue
		}
		if p, ok := t.prices[name[:i]]; ok && isStamp(name[i:]) {
			return name[:i], p, true
		}
	}
	return "", Price{}, false
}

// normalize lower-cases a model name and drops surrounding space and the
// "models/" prefix that Gemini resource names carry.
func normalize(model string) string {
	model = strings.TrimSpace(model)
	model = strings.ToLower(model) // no allocation when already lower-case
	return strings.TrimPrefix(model, "models/")
}

func isSep(c byte) bool { return c == '-' || c == '@' }

// isStamp reports whether rest, what follows a known model name, only says
// which snapshot of that model was called: "" or a sequence of separated
// tokens such as "-20250929", "@20250929", "-2025-08-07", "-001", "-latest",
// "-preview", "-preview-06-05" or "-preview-09-2025".
//
// A purely numeric first token needs at least three digits, so that a
// version the table does not list ("claude-opus-4" + "-9") is never read as
// a date. Words other than "latest" and "preview" ("-mini", "-pro",
// "-image", "-tts", "-exp") name another model with another price.
func isStamp(rest string) bool {
	first := true
	for rest != "" {
		if !isSep(rest[0]) {
			return false
		}
		rest = rest[1:]
		end := 0
		for end < len(rest) && !isSep(rest[end]) {
			end++
		}
		tok := rest[:end]
		rest = rest[end:]
		switch {
		case tok == "latest" || tok == "preview":
		case isDigits(tok) && (!first || len(tok) >= 3):
		default:
			return false
		}
		first = false
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
