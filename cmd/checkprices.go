package cmd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/pricing"
	"github.com/ccload/ccload/pricing/catalog"
)

// unpricedModel is one model a channel serves that no price layer prices;
// in `ccload check --json` as "unpriced": [{"channel", "model"}].
type unpricedModel struct {
	Channel string `json:"channel"`
	Model   string `json:"model"`
}

// checkPrices returns the price table check judges models by: the embedded
// table and the file's pricing: entries, with the price catalog fetched
// between them unless --offline (which never fetches). A catalog that
// cannot be fetched is a warning: serve would fall back the same way.
func checkPrices(opts *CheckOptions, snap *config.Snapshot) *pricing.Table {
	over := make(map[string]pricing.Price, len(snap.Pricing))
	for name, p := range snap.Pricing {
		over[name] = pricing.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}
	}
	var cat *pricing.Table
	if cfg := snap.PriceCatalog; cfg.URL != "" && !opts.Offline {
		s := catalog.New(catalog.Options{Client: proxyClient})
		ctx, cancel := context.WithTimeout(context.Background(), catalog.FetchTimeout)
		if err := s.Start(ctx, cfg); err != nil {
			fmt.Fprintf(opts.IO.Err, "warning: %v; judging prices without the catalog\n", err)
		}
		cancel()
		cat = s.Prices()
	}
	return pricing.Default().WithCatalog(cat).With(over)
}

// proxyClient is a plain client through proxy ("" = direct), for the one
// catalog fetch of `ccload check`.
func proxyClient(proxy string) (*http.Client, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if proxy != "" {
		u, err := url.Parse(proxy)
		if err != nil {
			return nil, err
		}
		t.Proxy = http.ProxyURL(u)
	}
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, nil
}

// findUnpriced lists the enabled models of the enabled channels that table
// cannot price, narrowed by --channel and --model like the probes.
func findUnpriced(opts *CheckOptions, snap *config.Snapshot, table *pricing.Table) []unpricedModel {
	out := []unpricedModel{}
	for _, ch := range snap.Channels {
		if !ch.Enabled || (len(opts.Channels) > 0 && !slices.Contains(opts.Channels, ch.Name)) {
			continue
		}
		for _, m := range engine.UnpricedModels(table, ch) {
			if len(opts.Models) == 0 || slices.Contains(opts.Models, m) {
				out = append(out, unpricedModel{Channel: ch.Name, Model: m})
			}
		}
	}
	return out
}

// warnUnpriced prints one line per channel with unpriced models to w:
// warnings, or errors under --strict.
func warnUnpriced(w io.Writer, list []unpricedModel, strict bool) {
	level := "warning"
	if strict {
		level = "error"
	}
	for i := 0; i < len(list); {
		j := i
		var names []string
		for ; j < len(list) && list[j].Channel == list[i].Channel; j++ {
			names = append(names, list[j].Model)
		}
		fmt.Fprintf(w, "%s: channel %q: no price for %s (logged as unpriced with cost 0; refused where a cost limit applies unless routing.unpriced: allow; add them under pricing:)\n",
			level, list[i].Channel, strings.Join(names, ", "))
		i = j
	}
}
