package catalog

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/wait"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/pricing"
	"github.com/ccload/ccload/store"
)

// mockCatalog is a catalog server on a loopback port whose answer a test
// changes: a valid document at some price, an invalid one, or an error.
type mockCatalog struct {
	srv *httptest.Server

	mu     sync.Mutex
	status int
	body   string
	hits   int
}

func newMockCatalog(t *testing.T) *mockCatalog {
	m := &mockCatalog{status: 200}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.hits++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(m.status)
		fmt.Fprint(w, m.body)
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *mockCatalog) serve(status int, body string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.status, m.body = status, body
}

// doc is a valid catalog pricing the catalog-only model at input $in.
func doc(in float64) string {
	return fmt.Sprintf(`{"acme": {"id": "acme", "models": {
	  "acme-large": {"id": "acme-large", "cost": {"input": %v, "output": 8, "cache_read": 0.1}},
	  "acme-free": {"id": "acme-free", "cost": {"input": 0, "output": 0}}}}}`, in)
}

func openStore(t *testing.T, dir string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite", filepath.Join(dir, "ccload.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newSyncer(t *testing.T, st store.Store, log *bytes.Buffer) *Syncer {
	t.Helper()
	var cs Store
	if st != nil {
		cs = st.(Store)
	}
	if log == nil {
		log = &bytes.Buffer{}
	}
	return New(Options{
		Client: func(string) (*http.Client, error) { return &http.Client{}, nil },
		Store:  cs,
		Logger: slog.New(slog.NewTextHandler(log, nil)),
	})
}

// inputPrice is what the syncer's copy charges for a million input tokens
// of model, and whether it prices it at all.
func inputPrice(s *Syncer, model string) (float64, bool) {
	t := s.Prices()
	if t == nil {
		return 0, false
	}
	p, ok := t.Lookup(model)
	return p.Input, ok
}

func TestSyncValidChangedInvalidUnreachable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := newMockCatalog(t)
	cfg := config.PriceCatalog{URL: m.srv.URL + "/api.json", Refresh: config.Duration(time.Hour)}

	// valid: fetched at start, priced, saved
	m.serve(200, doc(4))
	s := newSyncer(t, openStore(t, dir), nil)
	if err := s.Start(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if in, ok := inputPrice(s, "acme-large"); !ok || in != 4 {
		t.Fatalf("after start: acme-large input %v, %v; want 4", in, ok)
	}
	if _, ok := inputPrice(s, "acme-free"); ok {
		t.Error("a zero-priced catalog entry must stay unpriced")
	}
	if st := s.Status(); st.Source != SourceFetched || st.Models != 1 || st.LastError != "" || st.URL != cfg.URL {
		t.Errorf("status = %+v", st)
	}

	// changed prices: the next refresh takes them
	m.serve(200, doc(5))
	if err := s.Refresh(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if in, _ := inputPrice(s, "acme-large"); in != 5 {
		t.Fatalf("after a changed catalog: input %v, want 5", in)
	}

	// invalid documents and HTTP errors never replace the good copy
	for _, bad := range []struct {
		status int
		body   string
		want   string
	}{
		{200, `{"acme": {"models": {"acme-large": {"cost": {"input": -1, "output": 1}}}}}`, "negative"},
		{200, `<html>maintenance</html>`, "JSON object"},
		{200, `{"acme": {"models": {}}}`, "no model has a price"},
		{503, doc(99), "HTTP status 503"},
		{301, "", "HTTP status 301"},
	} {
		m.serve(bad.status, bad.body)
		err := s.Refresh(ctx, cfg)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("refresh with %d %.30q: err %v, want %q", bad.status, bad.body, err, bad.want)
		}
		if in, ok := inputPrice(s, "acme-large"); !ok || in != 5 {
			t.Errorf("after a bad refresh (%s): input %v, %v; want the good copy's 5", bad.want, in, ok)
		}
		if st := s.Status(); st.LastError == "" || st.Source != SourceFetched {
			t.Errorf("status after a bad refresh = %+v", st)
		}
	}

	// unreachable at the next start: the last good copy from the database
	m.srv.Close()
	var log bytes.Buffer
	s2 := newSyncer(t, openStore(t, dir), &log)
	if err := s2.Start(ctx, cfg); err == nil {
		t.Fatal("start with the catalog down reported no error")
	}
	if in, ok := inputPrice(s2, "acme-large"); !ok || in != 5 {
		t.Fatalf("after a restart with the catalog down: input %v, %v; want the saved 5", in, ok)
	}
	if st := s2.Status(); st.Source != SourceDatabase || st.LastError == "" || st.Fetched.IsZero() {
		t.Errorf("status = %+v", st)
	}
	if !strings.Contains(log.String(), "loaded from the database") {
		t.Errorf("log %q", log.String())
	}

	// a different URL does not inherit another URL's copy
	if err := s2.Start(ctx, config.PriceCatalog{URL: "http://127.0.0.1:1/other.json"}); err == nil {
		t.Fatal("unreachable other URL reported no error")
	}
	if s2.Prices() != nil {
		t.Error("the copy of the old URL still prices after the URL changed")
	}
	// no URL: no catalog
	if err := s2.Start(ctx, config.PriceCatalog{}); err != nil || s2.Prices() != nil || s2.Status() != (Status{}) {
		t.Errorf("start without URL: %v, %v, %+v", err, s2.Prices(), s2.Status())
	}
}

// TestSyncWithoutStore: no database, no saved copy, nothing breaks.
func TestSyncWithoutStore(t *testing.T) {
	m := newMockCatalog(t)
	m.serve(200, doc(3))
	s := newSyncer(t, nil, nil)
	if err := s.Start(context.Background(), config.PriceCatalog{URL: m.srv.URL}); err != nil {
		t.Fatal(err)
	}
	if in, ok := inputPrice(s, "acme-large"); !ok || in != 3 {
		t.Fatalf("input %v, %v", in, ok)
	}
}

// TestRunRefreshesAndKicks: the loop fetches again every refresh, and a
// kick makes it re-read the config at once.
func TestRunRefreshesAndKicks(t *testing.T) {
	m := newMockCatalog(t)
	m.serve(200, doc(1))
	var mu sync.Mutex
	cfg := config.PriceCatalog{URL: m.srv.URL, Refresh: config.Duration(5 * time.Millisecond)}
	current := func() config.PriceCatalog { mu.Lock(); defer mu.Unlock(); return cfg }
	s := newSyncer(t, nil, nil)
	if err := s.Start(context.Background(), current()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx, current); close(done) }()
	defer func() { cancel(); <-done }()

	m.serve(200, doc(2))
	wait.Eventually(t, 10*time.Second, "the refresh loop to pick up the changed price", func() bool {
		in, _ := inputPrice(s, "acme-large")
		return in == 2
	})

	// A reload points at a second catalog with a long refresh: the kick
	// loads it without waiting.
	m2 := newMockCatalog(t)
	m2.serve(200, doc(7))
	mu.Lock()
	cfg = config.PriceCatalog{URL: m2.srv.URL, Refresh: config.Duration(time.Hour)}
	mu.Unlock()
	s.Kick()
	wait.Eventually(t, 10*time.Second, "the kick to load the new URL", func() bool {
		in, _ := inputPrice(s, "acme-large")
		return in == 7
	})
}

// TestPricesLayerOverEmbedded: the syncer's table is what the engine puts
// between the embedded table and the config file's entries.
func TestPricesLayerOverEmbedded(t *testing.T) {
	m := newMockCatalog(t)
	m.serve(200, doc(4))
	s := newSyncer(t, nil, nil)
	if err := s.Start(context.Background(), config.PriceCatalog{URL: m.srv.URL}); err != nil {
		t.Fatal(err)
	}
	tab := pricing.Default().WithCatalog(s.Prices())
	if c := tab.Cost("acme-large", pricing.Usage{Input: 1_000_000}, 1); !c.Known || c.USD != 4 || c.From != pricing.OriginCatalog {
		t.Errorf("catalog model: %+v", c)
	}
	if c := tab.Cost("gpt-5", pricing.Usage{Input: 1_000_000}, 1); c.From != pricing.OriginEmbedded {
		t.Errorf("embedded model: %+v", c)
	}
}
