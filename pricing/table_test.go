package pricing

import (
	"strings"
	"testing"
	"time"
)

func TestWithOverrides(t *testing.T) {
	base := Default()
	before := base.Cost("claude-sonnet-4-5-20250929", Usage{Input: 1_000, Output: 1_000}, 1)

	tab := base.With(map[string]Price{
		// Replace an embedded model: the override is the whole entry, so
		// the long-context tier of claude-sonnet-4-5 is gone.
		"claude-sonnet-4-5": {Input: 1, Output: 2},
		// Add a model, the DESIGN.md example.
		"My-Local-Model": {Input: 0.2, Output: 0.8, CacheRead: 0.02, CacheWrite: 0.25},
		// A base name: dated names resolve to it, but an embedded snapshot
		// with its own entry keeps its price.
		"gpt-4o": {Input: 1, Output: 1},
		// A free model is known, at 0.
		"free-model": {},
	})

	tests := []struct {
		name      string
		model     string
		u         Usage
		want      float64
		wantModel string
	}{
		{
			name: "override replaces embedded price, dated name included", model: "claude-sonnet-4-5-20250929",
			u: Usage{Input: 1_000, Output: 1_000},
			// 1000*1 + 1000*2
			want: 0.003, wantModel: "claude-sonnet-4-5",
		},
		{
			name: "override drops the embedded long-context tier", model: "claude-sonnet-4-5",
			u:    Usage{Input: 300_000},
			want: 0.3, wantModel: "claude-sonnet-4-5",
		},
		{
			name: "added model, matched case-insensitively", model: "my-local-model",
			u: Usage{Input: 1_000, CacheRead: 100, CacheWrite: 100, Output: 1_000},
			// 800*0.2 + 100*0.02 + 100*0.25 + 1000*0.8 = 160+2+25+800
			want: 0.000987, wantModel: "my-local-model",
		},
		{
			name: "1h cache writes fall back to cache_write when the override has none", model: "my-local-model",
			u: Usage{Input: 100, CacheWrite1h: 100},
			// 100*0.25
			want: 0.000025, wantModel: "my-local-model",
		},
		{
			name: "override without a priority price bills priority as standard", model: "my-local-model",
			u:    Usage{Input: 1_000_000, ServiceTier: "priority"},
			want: 0.2, wantModel: "my-local-model",
		},
		{
			name: "dated name resolves to the overridden base", model: "gpt-4o-2024-08-06",
			u:    Usage{Input: 1_000_000, Output: 1_000_000},
			want: 2, wantModel: "gpt-4o",
		},
		{
			name: "embedded snapshot entry is not overridden by its base", model: "gpt-4o-2024-05-13",
			u:    Usage{Input: 1_000_000},
			want: 5, wantModel: "gpt-4o-2024-05-13",
		},
		{
			name: "free model", model: "free-model",
			u:    Usage{Input: 1_000_000, Output: 1_000_000},
			want: 0, wantModel: "free-model",
		},
		{
			name: "other embedded models are kept", model: "gpt-5",
			u:    Usage{Input: 1_000_000},
			want: 1.25, wantModel: "gpt-5",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tab.Cost(tt.model, tt.u, 1)
			if !got.Known || got.Model != tt.wantModel || !near(got.USD, tt.want) {
				t.Errorf("Cost(%q) = %+v, want USD %v Known true Model %q", tt.model, got, tt.want, tt.wantModel)
			}
		})
	}

	if after := base.Cost("claude-sonnet-4-5-20250929", Usage{Input: 1_000, Output: 1_000}, 1); after != before {
		t.Errorf("With changed the original table: %+v, was %+v", after, before)
	}
	if _, ok := base.Lookup("my-local-model"); ok {
		t.Error("With added a model to the original table")
	}
}

func TestWithOnEmptyTable(t *testing.T) {
	var empty Table
	tab := empty.With(map[string]Price{"m": {Input: 1, Output: 1}})
	if got := tab.Cost("m", Usage{Input: 1_000_000}, 1); !got.Known || !near(got.USD, 1) {
		t.Errorf("Cost on With of an empty table = %+v", got)
	}
	if _, ok := empty.Lookup("m"); ok {
		t.Error("With changed the empty table")
	}
}

// TestEmbeddedTable checks prices.json as shipped: it parses, states its
// sources and dates, and every entry is a sane price that Lookup reaches.
func TestEmbeddedTable(t *testing.T) {
	tab, err := parse(pricesJSON)
	if err != nil {
		t.Fatalf("prices.json: %v", err)
	}
	if len(tab.prices) < 140 {
		t.Errorf("prices.json has %d model names, want the current Claude, GPT and Gemini families", len(tab.prices))
	}
	for name, p := range tab.prices {
		if p.Input <= 0 || p.Output <= 0 {
			t.Errorf("%s: input %v, output %v; want both positive", name, p.Input, p.Output)
		}
		if p.CacheRead <= 0 {
			t.Errorf("%s: no cache_read price (bill cache hits as input when there is no discount)", name)
		}
		if p.LongContextThreshold > 0 && (p.LongInput <= p.Input || p.LongOutput < p.Output) {
			t.Errorf("%s: long-context rates %v/%v not above %v/%v", name, p.LongInput, p.LongOutput, p.Input, p.Output)
		}
		if p.Priority != 0 && (p.Priority < 1 || p.Priority > 3) {
			t.Errorf("%s: priority multiplier %v out of the published range", name, p.Priority)
		}
		// Every name must price as itself: no entry is shadowed by another.
		if key, _, ok := tab.lookup(name); !ok || key != name {
			t.Errorf("lookup(%q) = %q, %v", name, key, ok)
		}
		// Anthropic names carry both cache write prices.
		if strings.HasPrefix(name, "claude-") && (p.CacheWrite <= 0 || p.CacheWrite1h <= p.CacheWrite) {
			t.Errorf("%s: cache writes 5m %v, 1h %v", name, p.CacheWrite, p.CacheWrite1h)
		}
	}
	for _, family := range []string{"claude-opus-4-", "claude-sonnet-4", "claude-haiku-4-5", "claude-3-",
		"gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5-codex", "gpt-5.1", "gpt-5.2", "o3", "o4-mini",
		"gpt-4.1", "gpt-4o", "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-3",
		// the families commonly routed through gateways
		"deepseek-v4-", "deepseek-chat", "qwen3", "qwen-", "glm-5", "glm-4", "kimi-k2", "minimax-m",
		"grok-4", "mistral-large", "mistral-medium", "mistral-small", "codestral", "devstral"} {
		found := false
		for name := range tab.prices {
			found = found || strings.HasPrefix(name, family)
		}
		if !found {
			t.Errorf("no model of family %q in prices.json", family)
		}
	}

	f, err := decodeFile(pricesJSON)
	if err != nil {
		t.Fatal(err)
	}
	providers := map[string]bool{}
	for _, s := range f.Sources {
		providers[s.Provider] = true
		if _, err := time.Parse(time.DateOnly, s.Read); err != nil {
			t.Errorf("source %q: read date %q: %v", s.Page, s.Read, err)
		}
		if _, err := time.Parse(time.DateOnly, s.Stated); s.Stated != "" && (err != nil || s.Stated > s.Read) {
			t.Errorf("source %q: stated date %q must be a date no later than read %q", s.Page, s.Stated, s.Read)
		}
	}
	for _, p := range []string{"anthropic", "openai", "google", "deepseek", "alibaba", "zhipu", "moonshot", "minimax", "xai", "mistral"} {
		if !providers[p] {
			t.Errorf("no source page for %s", p)
		}
	}
}

func TestParseRejects(t *testing.T) {
	const src = `"sources":[{"id":"p","provider":"p","page":"P","url":"u","read":"2026-11-30"}]`
	tests := []struct{ name, json, want string }{
		{"unknown field", `{` + src + `,"models":[{"source":"p","names":["m"],"input":1,"output":1,"cache_reed":1}]}`, "unknown field"},
		{"zero input", `{` + src + `,"models":[{"source":"p","names":["m"],"input":0,"output":1}]}`, "positive"},
		{"duplicate name", `{` + src + `,"models":[{"source":"p","names":["m"],"input":1,"output":1},{"source":"p","names":["m"],"input":2,"output":2}]}`, "twice"},
		{"upper-case name", `{` + src + `,"models":[{"names":["M"],"input":1,"output":1}]}`, "lower-case"},
		{"no names", `{` + src + `,"models":[{"source":"p","input":1,"output":1}]}`, "no names"},
		{"unsourced entry", `{` + src + `,"models":[{"names":["m"],"input":1,"output":1}]}`, "not in sources"},
		{"unknown source", `{` + src + `,"models":[{"source":"q","names":["m"],"input":1,"output":1}]}`, "not in sources"},
		{"long tier below standard", `{` + src + `,"models":[{"source":"p","names":["m"],"input":2,"output":2,"long_context":{"threshold":10,"input":1,"output":2}}]}`, "long_context"},
		{"priority below standard", `{` + src + `,"models":[{"source":"p","names":["m"],"input":2,"output":2,"priority_input":1}]}`, "priority_input"},
		{"negative cache", `{` + src + `,"models":[{"source":"p","names":["m"],"input":2,"output":2,"cache_write":-1}]}`, "negative"},
		{"no sources", `{"models":[{"source":"p","names":["m"],"input":1,"output":1}]}`, "no sources"},
		{"undated source", `{"sources":[{"provider":"p","page":"P","url":"u"}],"models":[]}`, "required"},
		{"trailing data", `{` + src + `,"models":[]} {}`, "trailing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parse error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
