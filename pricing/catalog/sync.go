// Package catalog keeps the price catalog of `price_catalog:` up to date:
// it fetches the models.dev api.json document at start and every refresh,
// validates it (pricing.ParseCatalog), serves its prices to the engine and
// keeps the last good copy in the database, so that a server starting while
// the catalog is unreachable still prices the catalog's models.
//
// Nothing here overrides the config file: the engine layers the file's
// `pricing:` entries over the catalog, and the catalog over the embedded
// table (see package pricing).
package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/pricing"
	"github.com/ccload/ccload/store"
)

// Store keeps the last good copy per catalog URL; the stores of package
// store implement it.
type Store interface {
	SaveCatalog(ctx context.Context, c store.CatalogCopy) error
	LoadCatalog(ctx context.Context, url string) (c store.CatalogCopy, ok bool, err error)
}

// MaxBytes bounds a fetched document (models.dev's is a few MB): a catalog
// that grew past it, or a misconfigured URL serving something huge, is
// refused rather than held in memory.
const MaxBytes = 64 << 20

// FetchTimeout bounds one fetch, connection to last byte.
const FetchTimeout = time.Minute

// Source says where the current copy came from.
type Source string

// Where a copy can come from.
const (
	SourceNone     Source = ""         // no copy: the embedded table and pricing: price alone
	SourceFetched  Source = "fetched"  // fetched from the URL by this process
	SourceDatabase Source = "database" // the last good copy saved by an earlier fetch
)

// Status is what the syncer knows, for logs, /health and `ccload check`.
type Status struct {
	URL         string
	Source      Source
	Fetched     time.Time // when the current copy was fetched (zero when none)
	Models      int       // model names the current copy prices
	LastAttempt time.Time // last fetch attempt (zero before the first)
	LastError   string    // why the last attempt failed ("" when it succeeded)
}

// Options wire a Syncer.
type Options struct {
	// Client returns the HTTP client for a proxy setting ("" = direct): the
	// engine's upstream clients, so the catalog goes through the same proxy
	// support channels use. Required.
	Client func(proxy string) (*http.Client, error)
	// Store keeps the last good copy; nil = none (nothing survives a restart).
	Store Store
	// Logger; nil = slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil = time.Now.
	Now func() time.Time
}

// Syncer holds the catalog's current good copy. Its methods are safe for
// concurrent use.
type Syncer struct {
	opts Options
	cur  atomic.Pointer[copyState]

	mu     sync.Mutex // serialises fetches and guards status
	status Status
	kick   chan struct{}
}

type copyState struct {
	url   string
	table *pricing.Table
}

// New returns a Syncer with no copy.
func New(opts Options) *Syncer {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Syncer{opts: opts, kick: make(chan struct{}, 1)}
}

// Prices returns the current copy's prices, or nil when there is none. It
// implements engine.PriceCatalog.
func (s *Syncer) Prices() *pricing.Table {
	if c := s.cur.Load(); c != nil {
		return c.table
	}
	return nil
}

// Status returns what the syncer knows now.
func (s *Syncer) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// Start prepares the copy for cfg: the last good copy of cfg.URL from the
// store first (so a failed fetch still leaves the catalog's prices), then
// one fetch. It returns the fetch's error, which the caller logs: the
// server serves either way. With no URL it clears the copy and returns nil.
func (s *Syncer) Start(ctx context.Context, cfg config.PriceCatalog) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cfg.URL == "" {
		s.cur.Store(nil)
		s.status = Status{}
		return nil
	}
	if c := s.cur.Load(); c == nil || c.url != cfg.URL {
		s.cur.Store(nil)
		s.status = Status{URL: cfg.URL}
		s.loadSaved(ctx, cfg.URL)
	}
	return s.fetchLocked(ctx, cfg)
}

// Refresh fetches cfg.URL once and, when the document is valid, makes it
// the current copy and saves it. On any failure the current copy stays.
func (s *Syncer) Refresh(ctx context.Context, cfg config.PriceCatalog) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetchLocked(ctx, cfg)
}

// Kick asks a running Run loop to re-read the config and fetch now (after
// a reload changed price_catalog). It never blocks.
func (s *Syncer) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Run refreshes the catalog every cfg().Refresh until ctx ends, re-reading
// cfg each time; Kick makes it start over at once with the current config
// (a new URL is loaded as by Start). Start should have run first.
func (s *Syncer) Run(ctx context.Context, cfg func() config.PriceCatalog) {
	for {
		c := cfg()
		wait := time.Duration(c.Refresh)
		if wait <= 0 {
			wait = time.Duration(config.DefaultPriceCatalog.Refresh)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.kick:
			t.Stop()
			s.logErr(s.Start(ctx, cfg()))
		case <-t.C:
			if c = cfg(); c.URL != "" {
				s.logErr(s.Refresh(ctx, c))
			}
		}
	}
}

func (s *Syncer) logErr(err error) {
	if err != nil {
		s.opts.Logger.Warn("price catalog not refreshed; the previous prices stay", "err", err)
	}
}

// loadSaved installs the store's last good copy of url, if any and valid.
func (s *Syncer) loadSaved(ctx context.Context, url string) {
	if s.opts.Store == nil {
		return
	}
	saved, ok, err := s.opts.Store.LoadCatalog(ctx, url)
	if err != nil {
		s.opts.Logger.Warn("could not read the saved price catalog", "err", err)
		return
	}
	if !ok {
		return
	}
	table, info, err := pricing.ParseCatalog(saved.Body)
	if err != nil { // saved by an older parser that was laxer, or damaged
		s.opts.Logger.Warn("the saved price catalog is not valid; ignoring it", "url", url, "err", err)
		return
	}
	s.cur.Store(&copyState{url: url, table: table})
	s.status.Source, s.status.Fetched, s.status.Models = SourceDatabase, saved.Fetched, info.Priced
	s.opts.Logger.Info("price catalog loaded from the database", "url", url, "models", info.Priced, "fetched", saved.Fetched)
}

// fetchLocked is Refresh with s.mu held.
func (s *Syncer) fetchLocked(ctx context.Context, cfg config.PriceCatalog) error {
	if cfg.URL == "" {
		return nil
	}
	now := s.opts.Now()
	s.status.URL, s.status.LastAttempt = cfg.URL, now
	body, err := s.fetch(ctx, cfg)
	var table *pricing.Table
	var info pricing.CatalogInfo
	if err == nil {
		table, info, err = pricing.ParseCatalog(body)
	}
	if err != nil {
		s.status.LastError = err.Error()
		return fmt.Errorf("price catalog %s: %w", cfg.URL, err)
	}
	s.cur.Store(&copyState{url: cfg.URL, table: table})
	s.status = Status{URL: cfg.URL, Source: SourceFetched, Fetched: now, Models: info.Priced, LastAttempt: now}
	s.opts.Logger.Info("price catalog fetched", "url", cfg.URL, "models", info.Priced, "skipped", info.Skipped)
	if s.opts.Store != nil {
		if err := s.opts.Store.SaveCatalog(ctx, store.CatalogCopy{URL: cfg.URL, Body: body, Fetched: now}); err != nil {
			s.opts.Logger.Warn("could not save the price catalog; a restart without the catalog will not have it", "err", err)
		}
	}
	return nil
}

// fetch GETs the document through the client for cfg.Proxy.
func (s *Syncer) fetch(ctx context.Context, cfg config.PriceCatalog) ([]byte, error) {
	if s.opts.Client == nil {
		return nil, errors.New("no HTTP client")
	}
	client, err := s.opts.Client(cfg.Proxy)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.URL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP status %d (redirects are not followed)", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxBytes {
		return nil, fmt.Errorf("document is over %d MiB", MaxBytes>>20)
	}
	return body, nil
}
