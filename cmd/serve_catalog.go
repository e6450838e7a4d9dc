package cmd

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/pricing/catalog"
	"github.com/ccload/ccload/store"
)

// catalogStartTimeout bounds the first catalog fetch, which serve waits
// for so that the catalog's prices apply from the first request; an
// unreachable catalog delays the start by at most this much.
const catalogStartTimeout = 15 * time.Second

// newCatalog builds the price catalog syncer for serve. client is called
// only after the engine exists (the syncer fetches through the engine's
// proxy-aware upstream clients).
func newCatalog(st store.Store, log *slog.Logger, eng **engine.Engine) *catalog.Syncer {
	cs, _ := st.(catalog.Store) // every store.Open store has it; nil keeps no copy
	return catalog.New(catalog.Options{
		Client: func(proxy string) (*http.Client, error) { return (*eng).HTTPClient(proxy) },
		Store:  cs,
		Logger: log,
	})
}

// startCatalog loads the last good copy and fetches the catalog once, then
// keeps it fresh until ctx ends, following reloads of price_catalog.
func startCatalog(ctx context.Context, cat *catalog.Syncer, src *config.Source, log *slog.Logger) {
	if cfg := src.Current().PriceCatalog; cfg.URL != "" {
		sctx, cancel := context.WithTimeout(ctx, catalogStartTimeout)
		if err := cat.Start(sctx, cfg); err != nil {
			st := cat.Status()
			log.Warn("price catalog not fetched at start; using the last good copy if any, else the embedded table",
				"err", err, "copy", string(st.Source), "models", st.Models)
		}
		cancel()
	}
	src.OnSwap(func(old, cur *config.Snapshot) {
		if old.PriceCatalog != cur.PriceCatalog {
			cat.Kick()
		}
	})
	go cat.Run(ctx, func() config.PriceCatalog { return src.Current().PriceCatalog })
}
