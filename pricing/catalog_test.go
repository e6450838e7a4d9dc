package pricing

import (
	"os"
	"strings"
	"testing"
)

func readCatalog(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseCatalog(t *testing.T) {
	cat, info, err := ParseCatalog(readCatalog(t, "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := CatalogInfo{Providers: 4, Models: 11, Priced: 8, Skipped: 2}
	if info != want {
		t.Errorf("info = %+v, want %+v", info, want)
	}
	tests := []struct {
		model string
		want  Price
	}{
		// The maker's price wins over a reseller listing the same id.
		// An absent cache_write bills cache writes as input.
		{"deepseek-chat", Price{Input: 0.28, Output: 0.42, CacheRead: 0.028, CacheWrite: 0.28}},
		// Aggregator ids keep their provider prefix; no cache prices at all.
		{"deepseek/deepseek-chat", Price{Input: 0.3, Output: 0.9, CacheRead: 0.3, CacheWrite: 0.3}},
		{"reseller-only", Price{Input: 1, Output: 2, CacheRead: 1, CacheWrite: 1}},
		// Ids are lower-cased like every table name.
		{"catalog-only-model", Price{Input: 4, Output: 8, CacheRead: 0.4, CacheWrite: 4}},
		// The lowest context tier is the long-context tier.
		{"qwen-tiered", Price{Input: 0.5, Output: 3, CacheRead: 0.05, CacheWrite: 0.625,
			LongContextThreshold: 256_000, LongInput: 2, LongOutput: 6}},
		// A stated 0 is a price of 0.
		{"free-storage", Price{Input: 1, Output: 2, CacheRead: 0.2}},
		// The legacy field means "above 200K".
		{"legacy-long", Price{Input: 1, Output: 2, CacheRead: 1, CacheWrite: 1, LongContextThreshold: 200_000, LongInput: 2, LongOutput: 4}},
	}
	for _, tt := range tests {
		got, ok := cat.Lookup(tt.model)
		if !ok || got != tt.want {
			t.Errorf("Lookup(%q) = %+v, %v; want %+v", tt.model, got, ok, tt.want)
		}
		if o := cat.Origin(tt.model); o != OriginCatalog {
			t.Errorf("Origin(%q) = %q, want catalog", tt.model, o)
		}
	}
	for _, model := range []string{"free-or-unknown", "no-cost"} {
		if p, ok := cat.Lookup(model); ok {
			t.Errorf("Lookup(%q) = %+v; a zero or missing cost must stay unpriced", model, p)
		}
	}
}

func TestParseCatalogInvalid(t *testing.T) {
	for file, want := range map[string]string{
		"catalog_negative.json": `model "deepseek-chat": input price -0.28 is negative`,
		"catalog_empty.json":    "no model has a price",
		"catalog_shape.json":    `provider "deepseek"`,
		"catalog_html.txt":      "want a JSON object of providers",
	} {
		_, _, err := ParseCatalog(readCatalog(t, file))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want it to contain %q", file, err, want)
		}
	}
	for _, doc := range []string{``, `[]`, `{}`, `{"a": {"models": {}}} {}`, `null`} {
		if _, _, err := ParseCatalog([]byte(doc)); err == nil {
			t.Errorf("ParseCatalog(%q) accepted", doc)
		}
	}
}

// TestPricePrecedence pins the layer order: the config file's pricing:
// entries over the catalog over the embedded table.
func TestPricePrecedence(t *testing.T) {
	cat, _, err := ParseCatalog(readCatalog(t, "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	tab := Default().WithCatalog(cat).With(map[string]Price{"deepseek-chat": {Input: 1, Output: 1}})

	tests := []struct {
		model string
		u     Usage
		want  float64
		from  Origin
	}{
		// config beats catalog
		{"deepseek-chat", Usage{Input: 1_000_000}, 1, OriginConfig},
		// catalog beats embedded (embedded haiku 4.5 is $1/$5)
		{"claude-haiku-4-5-20251001", Usage{Input: 1_000_000, Output: 1_000_000}, 12, OriginCatalog},
		// embedded where neither overrides
		{"gpt-5", Usage{Input: 1_000_000}, 1.25, OriginEmbedded},
		// catalog-only model
		{"catalog-only-model", Usage{Input: 1_000_000}, 4, OriginCatalog},
	}
	for _, tt := range tests {
		c := tab.Cost(tt.model, tt.u, 1)
		if !c.Known || !near(c.USD, tt.want) || c.From != tt.from {
			t.Errorf("Cost(%q) = %+v, want USD %v from %s", tt.model, c, tt.want, tt.from)
		}
	}

	// The catalog cannot state the one-hour write or the priority tier; a
	// catalog entry over an embedded one keeps them, the 1h write scaled
	// like the 5-minute one (embedded 1.25 -> 2, catalog 2.5 -> 4).
	p, _ := tab.Lookup("claude-haiku-4-5")
	if p.CacheWrite1h != 4 {
		t.Errorf("catalog haiku CacheWrite1h = %v, want 4", p.CacheWrite1h)
	}
	gpt := Default().WithCatalog(mustTable(t, `{"openai": {"models": {"gpt-5": {"cost": {"input": 2, "output": 20}}}}}`))
	if c := gpt.Cost("gpt-5", Usage{Input: 1_000_000, ServiceTier: "priority"}, 1); !near(c.USD, 4) {
		t.Errorf("catalog gpt-5 priority cost = %v, want 4 (2x kept from the embedded entry)", c.USD)
	}

	// Layering never changes the layers.
	if c := Default().Cost("claude-haiku-4-5", Usage{Input: 1_000_000}, 1); !near(c.USD, 1) || c.From != OriginEmbedded {
		t.Errorf("embedded table changed by WithCatalog: %+v", c)
	}
	if Default().WithCatalog(nil) != Default() {
		t.Error("WithCatalog(nil) should return the table itself")
	}
}

func mustTable(t *testing.T, doc string) *Table {
	t.Helper()
	tab, _, err := ParseCatalog([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return tab
}
