package pricing

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

//go:embed prices.json
var pricesJSON []byte

// Default returns the embedded price table, parsed on first use. It panics
// if prices.json is invalid, which the package tests rule out.
func Default() *Table { return defaultTable() }

var defaultTable = sync.OnceValue(func() *Table {
	t, err := parse(pricesJSON)
	if err != nil {
		panic("pricing: embedded prices.json: " + err.Error())
	}
	return t
})

// priceFile is the shape of prices.json.
type priceFile struct {
	About   string   `json:"about"`
	Sources []source `json:"sources"`
	Models  []entry  `json:"models"`
}

// source names a provider page the prices were read from.
type source struct {
	ID       string `json:"id"` // what entries name in their "source"
	Provider string `json:"provider"`
	Page     string `json:"page"`
	URL      string `json:"url"`
	Read     string `json:"read"`   // date the page was read, YYYY-MM-DD
	Stated   string `json:"stated"` // date the copy read shows or was stored, when older than Read
}

// entry is one price shared by one or more model names.
type entry struct {
	Names        []string `json:"names"`
	Source       string   `json:"source"` // id of the sources entry the numbers come from
	Input        float64  `json:"input"`
	Output       float64  `json:"output"`
	CacheRead    float64  `json:"cache_read"`
	CacheWrite   float64  `json:"cache_write"`
	CacheWrite1h float64  `json:"cache_write_1h"`
	LongContext  *struct {
		Threshold int64   `json:"threshold"` // long rates apply when the prompt is above this
		Input     float64 `json:"input"`
		Output    float64 `json:"output"`
	} `json:"long_context"`
	// PriorityInput is the published "priority" service-tier input price;
	// the multiplier is PriorityInput/Input (OpenAI scales input, cached
	// input and output by the same factor).
	PriorityInput float64 `json:"priority_input"`
	Note          string  `json:"note"` // doubts and provenance of this entry
}

// parse decodes prices.json strictly (unknown fields are errors) and checks
// every entry, reporting all problems at once.
func parse(data []byte) (*Table, error) {
	f, err := decodeFile(data)
	if err != nil {
		return nil, err
	}
	var errs []error
	if len(f.Sources) == 0 {
		errs = append(errs, errors.New("no sources"))
	}
	ids := map[string]bool{}
	for i, s := range f.Sources {
		if s.ID == "" || s.Provider == "" || s.Page == "" || s.URL == "" || s.Read == "" {
			errs = append(errs, fmt.Errorf("sources[%d]: id, provider, page, url and read are all required", i))
		}
		if ids[s.ID] {
			errs = append(errs, fmt.Errorf("sources[%d]: id %q listed twice", i, s.ID))
		}
		ids[s.ID] = true
	}
	t := &Table{prices: make(map[string]Price)}
	for i, e := range f.Models {
		if !ids[e.Source] {
			errs = append(errs, fmt.Errorf("models[%d] %v: source %q is not in sources", i, e.Names, e.Source))
		}
		p, err := e.price()
		if err != nil {
			errs = append(errs, fmt.Errorf("models[%d] %v: %w", i, e.Names, err))
			continue
		}
		for _, name := range e.Names {
			if _, dup := t.prices[name]; dup {
				errs = append(errs, fmt.Errorf("models[%d]: %q listed twice", i, name))
			}
			t.prices[name] = p
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return t, nil
}

// decodeFile decodes prices.json, rejecting unknown fields and trailing data.
func decodeFile(data []byte) (priceFile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f priceFile
	if err := dec.Decode(&f); err != nil {
		return priceFile{}, err
	}
	if dec.More() {
		return priceFile{}, errors.New("trailing data after the top-level object")
	}
	return f, nil
}

// price validates e and turns it into a Price.
func (e entry) price() (Price, error) {
	if len(e.Names) == 0 {
		return Price{}, errors.New("no names")
	}
	for _, name := range e.Names {
		if name == "" || name != normalize(name) {
			return Price{}, fmt.Errorf("name %q must be lower-case with no spaces or models/ prefix", name)
		}
	}
	if e.Input <= 0 || e.Output <= 0 {
		return Price{}, errors.New("input and output must be positive")
	}
	if e.CacheRead < 0 || e.CacheWrite < 0 || e.CacheWrite1h < 0 || e.PriorityInput < 0 {
		return Price{}, errors.New("prices must not be negative")
	}
	if e.CacheRead > e.Input {
		return Price{}, errors.New("cache_read above input")
	}
	if e.PriorityInput != 0 && e.PriorityInput < e.Input {
		return Price{}, errors.New("priority_input below input")
	}
	p := Price{
		Input: e.Input, Output: e.Output,
		CacheRead: e.CacheRead, CacheWrite: e.CacheWrite, CacheWrite1h: e.CacheWrite1h,
	}
	if e.PriorityInput > 0 {
		p.Priority = e.PriorityInput / e.Input
	}
	if lc := e.LongContext; lc != nil {
		if lc.Threshold <= 0 || lc.Input < e.Input || lc.Output < e.Output {
			return Price{}, errors.New("long_context needs a positive threshold and rates at least the standard ones")
		}
		p.LongContextThreshold, p.LongInput, p.LongOutput = lc.Threshold, lc.Input, lc.Output
	}
	return p, nil
}
