package pricing

import "strings"

// Price is what one model costs, in USD per million tokens.
//
// A zero field is a price of zero, with two exceptions that exist because the
// config file's `pricing:` entries cannot state them: a zero CacheWrite1h
// bills one-hour cache writes at CacheWrite, and a zero Priority bills the
// "priority" service tier like the standard one.
type Price struct {
	Input        float64 // uncached prompt tokens
	Output       float64 // completion tokens, reasoning included
	CacheRead    float64 // prompt tokens read from the cache
	CacheWrite   float64 // prompt tokens written to the cache (Anthropic: 5-minute TTL)
	CacheWrite1h float64 // Anthropic one-hour cache writes; 0 = CacheWrite

	// LongContextThreshold, when > 0, selects the long-context tier for a
	// request whose prompt (Usage.Input) is above it: the whole request is
	// then billed at LongInput and LongOutput, and the cache prices are
	// scaled by LongInput/Input.
	LongContextThreshold int64
	LongInput            float64
	LongOutput           float64

	// Priority multiplies the whole request when the upstream reports
	// service_tier "priority" (OpenAI publishes a priority price per model:
	// 2x for the GPT-5 family, 1.7x to 2.5x elsewhere). 0 means the model
	// has no priority price and the tier is billed as standard.
	Priority float64
}

// FlexMultiplier is what the "flex" service tier costs relative to the
// standard one. OpenAI bills Flex processing at half price on every model
// that offers it (the same rates as its Batch API).
const FlexMultiplier = 0.5

// Usage is the token count of one request, as extracted from the upstream
// response.
//
// Input is the whole prompt INCLUDING the tokens read from or written to the
// cache. That is the OpenAI (prompt_tokens) and Gemini (promptTokenCount)
// convention. Anthropic reports input_tokens without the cache tokens, so
// its extractor must add cache_read_input_tokens and
// cache_creation_input_tokens to it.
//
// Output is every billed output token, reasoning included. OpenAI
// (completion_tokens) and Anthropic (output_tokens) already include
// reasoning; native Gemini reports thoughtsTokenCount apart from
// candidatesTokenCount, so the Gemini extractor must add the two. Reasoning
// is the reasoning part of Output, kept for display only: Cost never adds it
// to Output, so it is never billed twice.
type Usage struct {
	Input        int64  // prompt tokens, cache reads and writes included
	Output       int64  // output tokens, reasoning included
	CacheRead    int64  // part of Input read from the cache
	CacheWrite   int64  // part of Input written to the cache (5-minute TTL, or unsplit writes)
	CacheWrite1h int64  // part of Input written to Anthropic's one-hour cache
	Reasoning    int64  // part of Output spent reasoning; informational, not billed again
	ServiceTier  string // OpenAI service_tier actually used: "priority", "flex", "default", ...
}

// usd is the cost of u at p before the channel's cost multiplier.
func (p Price) usd(u Usage) float64 {
	in, out := nonNeg(u.Input), nonNeg(u.Output)
	read, write, write1h := nonNeg(u.CacheRead), nonNeg(u.CacheWrite), nonNeg(u.CacheWrite1h)
	cached := read + write + write1h
	uncached := max(in-cached, 0)

	inputPrice, outputPrice := p.Input, p.Output
	readPrice, writePrice, write1hPrice := p.CacheRead, p.CacheWrite, p.CacheWrite1h
	if write1hPrice == 0 {
		write1hPrice = writePrice
	}
	// An extractor that forgot to fold the cache into Input must not dodge
	// the long-context tier: the prompt is at least its cached part.
	if prompt := max(in, cached); p.LongContextThreshold > 0 && prompt > p.LongContextThreshold {
		scale := 1.0
		if p.Input > 0 {
			scale = p.LongInput / p.Input
		}
		inputPrice, outputPrice = p.LongInput, p.LongOutput
		readPrice, writePrice, write1hPrice = readPrice*scale, writePrice*scale, write1hPrice*scale
	}

	sum := float64(uncached)*inputPrice +
		float64(read)*readPrice +
		float64(write)*writePrice +
		float64(write1h)*write1hPrice +
		float64(out)*outputPrice
	return sum / 1e6 * p.tier(u.ServiceTier)
}

// tier is the multiplier for an OpenAI service_tier. Values other than
// "priority" and "flex" ("default", "auto", "standard", "scale", "") bill
// at the standard rates.
func (p Price) tier(serviceTier string) float64 {
	switch {
	case strings.EqualFold(serviceTier, "flex"):
		return FlexMultiplier
	case strings.EqualFold(serviceTier, "priority") && p.Priority > 0:
		return p.Priority
	}
	return 1
}

func nonNeg(n int64) int64 { return max(n, 0) }
