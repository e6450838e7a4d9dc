package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/store"
)

// catalogStore is what package pricing/catalog asks of the store.
type catalogStore interface {
	SaveCatalog(ctx context.Context, c store.CatalogCopy) error
	LoadCatalog(ctx context.Context, url string) (store.CatalogCopy, bool, error)
}

// testCatalogCopy: the last good copy of a price catalog survives a reopen,
// is kept per URL, is replaced by a newer save, and a large document (the
// real catalog is several MB) round-trips byte for byte.
func testCatalogCopy(t *testing.T, open Opener) {
	ctx := ctxFor(t)
	s := mustOpen(t, open)
	cs, ok := s.(catalogStore)
	if !ok {
		t.Fatalf("%s store does not implement CatalogStore", s.Driver())
	}
	const u1, u2 = "https://models.dev/api.json", "http://127.0.0.1:9/catalog.json"
	if _, ok, err := cs.LoadCatalog(ctx, u1); ok || err != nil {
		t.Fatalf("LoadCatalog on an empty table = %v, %v; want none", ok, err)
	}
	big := `{"p":{"models":{` + strings.Repeat(`"m":{"cost":{"input":1,"output":2}},`, 60_000) + `"z":{}}}, "note": "«ü»"}`
	first := store.CatalogCopy{URL: u1, Body: []byte(`{"old":{}}`), Fetched: base}
	second := store.CatalogCopy{URL: u1, Body: []byte(big), Fetched: base.Add(6 * time.Hour)}
	other := store.CatalogCopy{URL: u2, Body: []byte(`{"other":{}}`), Fetched: base}
	for _, c := range []store.CatalogCopy{first, other, second} {
		if err := cs.SaveCatalog(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	reopened := mustOpen(t, open).(catalogStore)
	for _, want := range []store.CatalogCopy{second, other} {
		got, ok, err := reopened.LoadCatalog(ctx, want.URL)
		if err != nil || !ok || string(got.Body) != string(want.Body) || !got.Fetched.Equal(want.Fetched.Truncate(time.Millisecond)) {
			t.Errorf("LoadCatalog(%q) = %d bytes at %v, %v, %v; want %d bytes at %v",
				want.URL, len(got.Body), got.Fetched, ok, err, len(want.Body), want.Fetched)
		}
	}
	if err := cs.SaveCatalog(ctx, store.CatalogCopy{URL: u1, Body: []byte{0xff, 0xfe}}); err == nil {
		t.Error("SaveCatalog accepted a body that is not UTF-8")
	}
}
