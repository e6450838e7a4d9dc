package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// unpricedYAML serves one priced and two made-up models, with a catalog
// that prices one of the made-up ones.
func unpricedYAML(t *testing.T, upstream, catalogURL string) string {
	file := filepath.Join(t.TempDir(), "ccload.yaml")
	os.WriteFile(file, []byte(`version: 1
price_catalog: {url: "`+catalogURL+`"}
channels:
  - name: relay
    urls: [{url: "`+upstream+`", protocols: [anthropic]}]
    keys: [sk-test-key-000001]
    models: [claude-haiku-4-5, made-up-model, catalog-model, {name: off-model, disabled: true}]
`), 0o600)
	return file
}

func catalogServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, `{"acme": {"models": {"catalog-model": {"cost": {"input": 1, "output": 2}}}}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestCheckOfflineListsUnpriced: --offline names every served
// model without a price as a warning and fetches nothing; --strict makes
// it an error; --json lists them.
func TestCheckOfflineListsUnpriced(t *testing.T) {
	cat, hits := catalogServer(t)
	file := unpricedYAML(t, "https://api.anthropic.com", cat.URL)

	io, out, errb := testIO()
	if err := checkRun(&CheckOptions{IO: io, Config: file, Offline: true}); err != nil {
		t.Fatalf("offline check failed on unpriced models without --strict: %v", err)
	}
	if !strings.Contains(out.String(), "ok (") {
		t.Errorf("stdout %q", out)
	}
	want := `warning: channel "relay": no price for made-up-model, catalog-model (`
	if !strings.Contains(errb.String(), want) || strings.Contains(errb.String(), "off-model") || strings.Contains(errb.String(), "claude-haiku") {
		t.Errorf("stderr %q, want %q", errb, want)
	}

	io, _, errb = testIO()
	err := checkRun(&CheckOptions{IO: io, Config: file, Offline: true, Strict: true})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitFail || !strings.Contains(errb.String(), `error: channel "relay": no price for made-up-model`) {
		t.Errorf("--strict: err %v, stderr %q", err, errb)
	}

	io, out, _ = testIO()
	if err := checkRun(&CheckOptions{IO: io, Config: file, Offline: true, JSON: true}); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Unpriced []unpricedModel `json:"unpriced"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Unpriced) != 2 || rep.Unpriced[0] != (unpricedModel{"relay", "made-up-model"}) {
		t.Errorf("--json unpriced = %+v (%v)\n%s", rep.Unpriced, err, out)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("--offline fetched the price catalog %d time(s)", n)
	}
}

// TestCheckOnlineUsesCatalog: without --offline the catalog is fetched
// once and prices what it lists.
func TestCheckOnlineUsesCatalog(t *testing.T) {
	m := mockupstream.New(mockupstream.Options{})
	mockURL, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cat, hits := catalogServer(t)
	file := unpricedYAML(t, mockURL, cat.URL)
	io, _, errb := testIO()
	if err := checkRun(&CheckOptions{IO: io, Config: file, Parallel: 2, Timeout: defaultCheckTimeout}); err != nil {
		t.Fatalf("check: %v\n%s", err, errb)
	}
	if !strings.Contains(errb.String(), `no price for made-up-model (`) || hits.Load() != 1 {
		t.Errorf("stderr %q, catalog hits %d; want only made-up-model unpriced after one fetch", errb, hits.Load())
	}
}
