package pricing

import (
	"math"
	"testing"
)

// near compares USD amounts; every want below is computed by hand from the
// per-million prices in prices.json, so only float rounding may differ.
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-12 }

// TestCost prices one request per case against the embedded table. The
// comment of each case is the arithmetic, in USD-per-million units.
func TestCost(t *testing.T) {
	tests := []struct {
		name      string
		model     string
		u         Usage
		mult      float64
		want      float64
		wantModel string
	}{
		// Anthropic: Input is the whole prompt, cache tokens included.
		{
			name: "claude 5m and 1h cache writes priced apart", model: "claude-sonnet-4-5-20250929",
			u: Usage{Input: 10_000, CacheRead: 6_000, CacheWrite: 2_000, CacheWrite1h: 1_000, Output: 500}, mult: 1,
			// 1000*3 + 6000*0.3 + 2000*3.75 + 1000*6 + 500*15 = 3000+1800+7500+6000+7500
			want: 0.0258, wantModel: "claude-sonnet-4-5",
		},
		{
			name: "claude sonnet 4.5 at the 200K threshold stays standard", model: "claude-sonnet-4-5",
			u: Usage{Input: 200_000, CacheRead: 100_000, Output: 1_000}, mult: 1,
			// 100000*3 + 100000*0.3 + 1000*15
			want: 0.345, wantModel: "claude-sonnet-4-5",
		},
		{
			name: "claude sonnet 4.5 above 200K bills the whole request long", model: "claude-sonnet-4-5-20250929",
			u: Usage{Input: 200_001, CacheRead: 100_000, Output: 1_000}, mult: 1,
			// 100001*6 + 100000*0.6 + 1000*22.5 = 600006+60000+22500
			want: 0.682506, wantModel: "claude-sonnet-4-5",
		},
		{
			name: "claude sonnet 4.6 is flat above 200K", model: "claude-sonnet-4-6",
			u: Usage{Input: 300_000, Output: 1_000}, mult: 1,
			// 300000*3 + 1000*15
			want: 0.915, wantModel: "claude-sonnet-4-6",
		},
		{
			name: "claude haiku 5.5 at its 100K threshold", model: "claude-haiku-5-5",
			u: Usage{Input: 100_000, CacheRead: 50_000, CacheWrite: 10_000, Output: 2_000}, mult: 1,
			// 40000*0.1 + 50000*0.01 + 10000*0.125 + 2000*0.5 = 4000+500+1250+1000
			want: 0.00675, wantModel: "claude-haiku-5-5",
		},
		{
			name: "claude haiku 5.5 above 100K scales cache prices too", model: "claude-haiku-5-5",
			u: Usage{Input: 100_001, CacheRead: 50_000, CacheWrite: 10_000, CacheWrite1h: 1, Output: 2_000}, mult: 1,
			// 40000*0.5 + 50000*0.05 + 10000*0.625 + 1*1.0 + 2000*2.5 = 20000+2500+6250+1+5000
			want: 0.033751, wantModel: "claude-haiku-5-5",
		},
		{
			name: "claude opus 4.1 dated", model: "claude-opus-4-1-20250805",
			u: Usage{Input: 1_000, Output: 1_000}, mult: 1,
			// 1000*15 + 1000*75
			want: 0.09, wantModel: "claude-opus-4-1",
		},
		{
			name: "claude opus 4 dated resolves to opus 4, not 4.1 or 4.5", model: "claude-opus-4-20250514",
			u: Usage{Input: 1_000, Output: 1_000}, mult: 1,
			want: 0.09, wantModel: "claude-opus-4",
		},
		{
			name: "claude latest alias", model: "claude-3-7-sonnet-latest",
			u: Usage{Input: 1_000_000}, mult: 1,
			want: 3, wantModel: "claude-3-7-sonnet",
		},
		{
			name: "claude reasoning is part of output, not added", model: "claude-haiku-4-5",
			u: Usage{Input: 1_000, Output: 3_000, Reasoning: 2_500}, mult: 1,
			// 1000*1 + 3000*5
			want: 0.016, wantModel: "claude-haiku-4-5",
		},
		{
			name: "anthropic priority tier has no published multiplier", model: "claude-haiku-4-5",
			u: Usage{Input: 1_000, ServiceTier: "priority"}, mult: 1,
			want: 0.001, wantModel: "claude-haiku-4-5",
		},
		{
			name: "input smaller than its cache part is not negative", model: "claude-haiku-4-5",
			u: Usage{Input: 100, CacheRead: 500}, mult: 1,
			// uncached max(100-500, 0) = 0; 500*0.1
			want: 0.00005, wantModel: "claude-haiku-4-5",
		},

		// OpenAI: cached tokens are part of prompt_tokens.
		{
			name: "gpt-5 dated with cache and reasoning", model: "gpt-5-2025-08-07",
			u: Usage{Input: 10_000, CacheRead: 4_000, Output: 2_000, Reasoning: 1_500}, mult: 1,
			// 6000*1.25 + 4000*0.125 + 2000*10 = 7500+500+20000
			want: 0.028, wantModel: "gpt-5",
		},
		{
			name: "gpt-5 priority is 2x", model: "gpt-5",
			u: Usage{Input: 10_000, CacheRead: 4_000, Output: 2_000, ServiceTier: "priority"}, mult: 1,
			want: 0.056, wantModel: "gpt-5",
		},
		{
			name: "gpt-5 flex is half", model: "gpt-5",
			u: Usage{Input: 10_000, CacheRead: 4_000, Output: 2_000, ServiceTier: "flex"}, mult: 1,
			want: 0.014, wantModel: "gpt-5",
		},
		{
			name: "default service tier is standard", model: "gpt-5",
			u: Usage{Input: 10_000, CacheRead: 4_000, Output: 2_000, ServiceTier: "default"}, mult: 1,
			want: 0.028, wantModel: "gpt-5",
		},
		{
			name: "gpt-5.5 priority is 2.5x", model: "gpt-5.5",
			u: Usage{Input: 1_000, Output: 1_000, ServiceTier: "priority"}, mult: 1,
			// (1000*5 + 1000*30) * 2.5
			want: 0.0875, wantModel: "gpt-5.5",
		},
		{
			name: "gpt-4o priority is 1.7x", model: "gpt-4o-2024-08-06",
			u: Usage{Input: 1_000, Output: 1_000, ServiceTier: "priority"}, mult: 1,
			// (1000*2.5 + 1000*10) * 4.25/2.5
			want: 0.02125, wantModel: "gpt-4o",
		},
		{
			name: "gpt-5-nano has no priority price", model: "gpt-5-nano",
			u: Usage{Input: 1_000_000, ServiceTier: "priority"}, mult: 1,
			want: 0.05, wantModel: "gpt-5-nano",
		},
		{
			name: "gpt-4o 2024-05-13 snapshot has its own price", model: "gpt-4o-2024-05-13",
			u: Usage{Input: 1_000, CacheRead: 500, Output: 1_000}, mult: 1,
			// 500*5 + 500*5 + 1000*15
			want: 0.02, wantModel: "gpt-4o-2024-05-13",
		},
		{
			name: "gpt-4.1-mini dated", model: "gpt-4.1-mini-2025-04-14",
			u: Usage{Input: 1_000_000, CacheRead: 500_000, Output: 100_000}, mult: 1,
			// 500000*0.4 + 500000*0.1 + 100000*1.6
			want: 0.41, wantModel: "gpt-4.1-mini",
		},
		{
			name: "gpt-5.4 at 272K stays standard", model: "gpt-5.4",
			u: Usage{Input: 272_000, CacheRead: 72_000, Output: 1_000}, mult: 1,
			// 200000*2.5 + 72000*0.25 + 1000*15
			want: 0.533, wantModel: "gpt-5.4",
		},
		{
			name: "gpt-5.4 above 272K is long", model: "gpt-5.4",
			u: Usage{Input: 272_001, CacheRead: 72_000, Output: 1_000}, mult: 1,
			// 200001*5 + 72000*0.5 + 1000*22.5 = 1000005+36000+22500
			want: 1.058505, wantModel: "gpt-5.4",
		},
		{
			name: "flex applies to long rates too", model: "gpt-5.4",
			u: Usage{Input: 272_001, CacheRead: 72_000, Output: 1_000, ServiceTier: "flex"}, mult: 1,
			want: 0.5292525, wantModel: "gpt-5.4",
		},

		// Gemini: promptTokenCount includes cachedContentTokenCount.
		{
			name: "gemini 2.5 pro at 200K", model: "gemini-2.5-pro",
			u: Usage{Input: 200_000, CacheRead: 50_000, Output: 10_000}, mult: 1,
			// 150000*1.25 + 50000*0.125 + 10000*10
			want: 0.29375, wantModel: "gemini-2.5-pro",
		},
		{
			name: "gemini 2.5 pro above 200K", model: "gemini-2.5-pro",
			u: Usage{Input: 200_001, CacheRead: 50_000, Output: 10_000}, mult: 1,
			// 150001*2.5 + 50000*0.25 + 10000*15 = 375002.5+12500+150000
			want: 0.5375025, wantModel: "gemini-2.5-pro",
		},
		{
			name: "gemini 3 pro preview name", model: "gemini-3-pro-preview",
			u: Usage{Input: 250_000, Output: 1_000}, mult: 1,
			// 250000*4 + 1000*18
			want: 1.018, wantModel: "gemini-3-pro",
		},
		{
			name: "gemini flash dated preview", model: "gemini-2.5-flash-preview-09-2025",
			u: Usage{Input: 1_000, Output: 1_000}, mult: 1,
			want: 0.0028, wantModel: "gemini-2.5-flash",
		},
		{
			name: "gemini resource name", model: "models/gemini-2.5-flash-lite",
			u: Usage{Input: 1_000, Output: 1_000}, mult: 1,
			want: 0.0005, wantModel: "gemini-2.5-flash-lite",
		},
		{
			name: "gemini thoughts already folded into output", model: "gemini-2.5-flash",
			u: Usage{Output: 3_000, Reasoning: 2_000}, mult: 1,
			want: 0.0075, wantModel: "gemini-2.5-flash",
		},

		// the families commonly routed through gateways.
		{
			name: "deepseek v4 flash with cache hits", model: "deepseek-chat",
			u: Usage{Input: 1_000_000, CacheRead: 500_000, Output: 100_000}, mult: 1,
			// 500000*0.14 + 500000*0.0028 + 100000*0.28 = 70000+1400+28000
			want: 0.0994, wantModel: "deepseek-chat",
		},
		{
			name: "qwen 3.7 plus above 256K is long", model: "qwen3.7-plus",
			u: Usage{Input: 300_000, CacheRead: 100_000, Output: 1_000}, mult: 1,
			// 200000*2 + 100000*0.05*4 + 1000*6 = 400000+20000+6000
			want: 0.426, wantModel: "qwen3.7-plus",
		},
		{
			name: "glm 5.1", model: "GLM-5.1",
			u: Usage{Input: 10_000, CacheRead: 2_000, Output: 1_000}, mult: 1,
			// 8000*1.4 + 2000*0.26 + 1000*4.4 = 11200+520+4400
			want: 0.01612, wantModel: "glm-5.1",
		},
		{
			name: "kimi k2 preview snapshot", model: "kimi-k2-0905-preview",
			u: Usage{Input: 1_000_000, Output: 1_000_000}, mult: 1,
			want: 3.1, wantModel: "kimi-k2-0905-preview",
		},
		{
			name: "minimax case-insensitive", model: "MiniMax-M2.5-highspeed",
			u: Usage{Input: 1_000_000, Output: 1_000_000}, mult: 1,
			want: 3, wantModel: "minimax-m2.5-highspeed",
		},
		{
			name: "grok above 200K", model: "grok-4.3",
			u: Usage{Input: 250_000, CacheRead: 50_000, Output: 1_000}, mult: 1,
			// 200000*2.5 + 50000*0.4 + 1000*5 = 500000+20000+5000
			want: 0.525, wantModel: "grok-4.3",
		},
		{
			name: "mistral dated id", model: "mistral-large-2411",
			u: Usage{Input: 1_000_000, Output: 1_000_000}, mult: 1,
			want: 8, wantModel: "mistral-large-2411",
		},

		// The channel's cost_multiplier.
		{
			name: "cost multiplier", model: "claude-haiku-4-5",
			u: Usage{Input: 1_000, Output: 1_000}, mult: 0.8,
			// (1000*1 + 1000*5) * 0.8
			want: 0.0048, wantModel: "claude-haiku-4-5",
		},
		{
			name: "multiplier stacks with service tier", model: "gpt-5",
			u: Usage{Input: 1_000, Output: 1_000, ServiceTier: "priority"}, mult: 1.5,
			// (1000*1.25 + 1000*10) * 2 * 1.5
			want: 0.03375, wantModel: "gpt-5",
		},
		{
			name: "zero multiplier is a free channel", model: "claude-haiku-4-5",
			u: Usage{Input: 1_000, Output: 1_000}, mult: 0,
			want: 0, wantModel: "claude-haiku-4-5",
		},
		{
			name: "negative multiplier counts as zero", model: "claude-haiku-4-5",
			u: Usage{Input: 1_000, Output: 1_000}, mult: -1,
			want: 0, wantModel: "claude-haiku-4-5",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Default().Cost(tt.model, tt.u, tt.mult)
			if !got.Known || got.Model != tt.wantModel || !near(got.USD, tt.want) {
				t.Errorf("Cost(%q) = %+v, want USD %v Known true Model %q", tt.model, got, tt.want, tt.wantModel)
			}
		})
	}
}

func TestCostUnknownModel(t *testing.T) {
	for _, model := range []string{"my-local-model", "claude-opus-4-9", "gpt-5-turbo", ""} {
		got := Default().Cost(model, Usage{Input: 1_000_000, Output: 1_000_000}, 1)
		if got != (Cost{}) {
			t.Errorf("Cost(%q) = %+v, want zero Cost (USD 0, Known false)", model, got)
		}
	}
}

// TestLookupNames pins the name rules: dated, @dated, -latest and -preview
// names find their base model; any other suffix is a different model and
// stays unknown rather than borrowing a neighbour's price.
func TestLookupNames(t *testing.T) {
	tests := []struct{ name, want string }{ // want "" = unknown
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"claude-sonnet-4-5@20250929", "claude-sonnet-4-5"}, // Vertex AI
		{"Claude-Sonnet-4-5", "claude-sonnet-4-5"},
		{" claude-sonnet-4-5 ", "claude-sonnet-4-5"},
		{"claude-3-5-haiku-latest", "claude-3-5-haiku"},
		{"claude-haiku-4-5-20251001", "claude-haiku-4-5"},
		{"claude-opus-4-1", "claude-opus-4-1"},
		{"claude-opus-4-0", "claude-opus-4-0"},
		{"claude-opus-4-9", ""},          // an unlisted version is not Opus 4
		{"claude-opus-4-5-thinking", ""}, // relay-invented names need a pricing: entry
		{"claude-sonnet-4-5-", ""},       // empty stamp token
		{"gpt-5-pro-2025-10-06", "gpt-5-pro"},
		{"gpt-5-turbo", ""},
		{"gpt-5.1-codex-mini", "gpt-5.1-codex-mini"},
		{"gpt-5.1-codex-max", "gpt-5.1-codex-max"},
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini"},
		{"gpt-4o-mini-search-preview", ""},
		{"gpt-4o-audio-preview-2024-12-17", ""},
		{"chatgpt-4o-latest", ""},
		{"o3-2025-04-16", "o3"},
		{"o3-deep-research", ""},
		{"gemini-2.5-flash-image", ""},
		{"gemini-2.5-flash-preview-tts", ""},
		{"gemini-2.5-pro-exp-03-25", ""}, // experimental models were free, not 2.5 Pro
		{"gemini-2.5-pro-preview-06-05", "gemini-2.5-pro"},
		{"gemini-2.5-flash-lite-preview-06-17", "gemini-2.5-flash-lite"},
		{"gemini-2.0-flash-001", ""},
		{"gemini-3.1-pro-preview", "gemini-3.1-pro"},
		{"gemini-flash-latest", ""},
		{"deepseek-v4-pro", "deepseek-v4-pro"},
		{"mistral-large-2512", "mistral-large-2512"},
		{"mistral-large-2603", ""}, // Mistral's YYMM ids are different models, not stamps
		{"kimi-k2", ""},
		{"minimax-m2.5-lightning", ""},
		{"", ""},
		{"-20250929", ""},
	}
	for _, tt := range tests {
		key, _, ok := Default().lookup(tt.name)
		if key != tt.want || ok != (tt.want != "") {
			t.Errorf("lookup(%q) = %q, %v; want %q", tt.name, key, ok, tt.want)
		}
		if p, ok2 := Default().Lookup(tt.name); ok2 != ok || (ok && p != Default().prices[key]) {
			t.Errorf("Lookup(%q) = %+v, %v; disagrees with lookup", tt.name, p, ok2)
		}
	}
}

func TestIsStamp(t *testing.T) {
	for rest, want := range map[string]bool{
		"": true, "-20250929": true, "@20250929": true, "-2025-08-07": true, "-001": true,
		"-latest": true, "-preview": true, "-preview-06-05": true, "-preview-09-2025": true,
		"-9": false, "-1-20250805": false, "-mini": false, "-exp": false, "-": false,
		"--20250929": false, "x20250929": false, "-preview-tts": false,
	} {
		if got := isStamp(rest); got != want {
			t.Errorf("isStamp(%q) = %v, want %v", rest, got, want)
		}
	}
}

func TestCostDoesNotAllocate(t *testing.T) {
	tab := Default()
	u := Usage{Input: 120_000, CacheRead: 80_000, CacheWrite: 10_000, Output: 900, ServiceTier: "priority"}
	allocs := testing.AllocsPerRun(100, func() {
		tab.Cost("claude-sonnet-4-5-20250929", u, 1)
		tab.Cost("gpt-5-2025-08-07", u, 1)
		tab.Cost("no-such-model", u, 1)
	})
	if allocs != 0 {
		t.Errorf("Cost allocates %v times per call, want 0", allocs)
	}
}

func BenchmarkCost(b *testing.B) {
	tab := Default()
	u := Usage{Input: 120_000, CacheRead: 80_000, CacheWrite: 10_000, Output: 900, Reasoning: 400}
	for _, model := range []string{"claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "gemini-2.5-flash-lite-preview-06-17", "unknown-model-x"} {
		b.Run(model, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tab.Cost(model, u, 1)
			}
		})
	}
}
