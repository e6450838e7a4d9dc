package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/store"
)

// runServe starts serveRun on file and returns its base URL and a stop
// function that waits for it to return.
func runServe(t *testing.T, file string) (string, func()) {
	t.Helper()
	io, _, errb := testIO()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serveRun(ctx, &ServeOptions{IO: io, Config: file, Grace: 5 * time.Second, NoWatch: true, Ready: func(a string) { addr <- a }})
	}()
	select {
	case a := <-addr:
		return "http://" + a, func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v\n%s", err, errb)
			}
		}
	case err := <-done:
		cancel()
		t.Fatalf("serve exited: %v\n%s", err, errb)
	}
	return "", nil
}

// TestServePricesFromCatalog: a model that only the catalog
// prices is logged at the catalog's price after start, under a token with
// a cost_limit (so it is not refused as unpriced); at the next start, with
// the catalog unreachable, the copy saved in the database still prices it.
func TestServePricesFromCatalog(t *testing.T) {
	cat := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"acme": {"id": "acme", "models": {"acme-large": {"id": "acme-large",
		  "cost": {"input": 4000, "output": 8000, "cache_read": 400, "cache_write": 5000}}}}}`)
	}))
	defer cat.Close()
	m := mockupstream.New(mockupstream.Options{})
	mockURL, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	dir := t.TempDir()
	db := filepath.Join(dir, "ccload.db")
	sum := sha256.Sum256([]byte("sk-test-catalog-token"))
	file := filepath.Join(dir, "ccload.yaml")
	os.WriteFile(file, []byte(`version: 1
server: {listen: "127.0.0.1:0", admin_password: pw}
storage: {driver: sqlite, dsn: "`+db+`"}
price_catalog: {url: "`+cat.URL+`/api.json", refresh: 6h}
channels:
  - name: a
    urls: [{url: "`+mockURL+`", protocols: [anthropic]}]
    keys: [upstream-key-1]
    models: [acme-large]
tokens:
  - {name: t, token_sha256: `+hex.EncodeToString(sum[:])+`, cost_limit: 1000}
`), 0o600)

	send := func(base string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(`{"model":"acme-large","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("x-api-key", "sk-test-catalog-token")
		req.Header.Set("anthropic-version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: the catalog model was not priced", resp.StatusCode)
		}
	}
	// /admin/status says where the prices come from.
	catalogStatus := func(base string) adminapi.PriceCatalogStatus {
		t.Helper()
		req, _ := http.NewRequest("GET", base+"/admin/status", nil)
		req.Header.Set("Authorization", "Bearer pw")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st adminapi.Status
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || st.PriceCatalog == nil {
			t.Fatalf("/admin/status: %v, price_catalog %v", err, st.PriceCatalog)
		}
		return *st.PriceCatalog
	}
	base, stop := runServe(t, file)
	send(base)
	if st := catalogStatus(base); st.Source != "fetched" || st.Models != 1 || st.Error != "" || st.FetchedAt == nil {
		t.Errorf("price_catalog after a fetch = %+v", st)
	}
	stop()

	cat.Close() // the next start cannot reach the catalog
	base, stop = runServe(t, file)
	send(base)
	if st := catalogStatus(base); st.Source != "database" || st.Models != 1 || st.Error == "" || st.FetchedAt == nil {
		t.Errorf("price_catalog with the catalog down = %+v", st)
	}
	stop()

	st, err := store.Open(context.Background(), "sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.QueryLogs(context.Background(), store.LogQuery{Limit: 10})
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %d, %v", len(rows), err)
	}
	for i, r := range rows {
		uncached := r.InputTokens - r.CacheReadTokens - r.CacheWriteTokens
		want := (float64(uncached)*4000 + float64(r.CacheReadTokens)*400 + float64(r.CacheWriteTokens)*5000 + float64(r.OutputTokens)*8000) / 1e6
		if r.Unpriced || r.Cost <= 0 || math.Abs(r.Cost-want) > 1e-9 {
			t.Errorf("row %d (newest first): cost %v unpriced %v, want %v at the catalog's price", i, r.Cost, r.Unpriced, want)
		}
	}
}
