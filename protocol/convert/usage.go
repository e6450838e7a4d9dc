package convert

import (
	"bytes"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/jsonwalk"
)

// Usage is the token count of one response, in one convention for every
// family (the table in doc.go lists the fields it is read from and written
// to):
//
//   - Input is every prompt token, cached or not, as OpenAI and Gemini count
//     them. Anthropic's input_tokens excludes cache reads and writes, so
//     Input = input_tokens + cache_read_input_tokens + cache_creation_input_tokens.
//   - CacheRead and CacheWrite are the parts of Input read from and written to
//     the prompt cache.
//   - Output is every generated token including reasoning, as Anthropic and
//     OpenAI count them. Gemini's candidatesTokenCount excludes thoughts, so
//     Output = candidatesTokenCount + thoughtsTokenCount.
//   - Reasoning is the part of Output spent on thinking.
//   - ServiceTier is the OpenAI service_tier actually used ("default",
//     "flex", "priority"), read from native OpenAI Chat and Responses
//     answers only; it changes the price.
type Usage struct {
	Input, Output, CacheRead, CacheWrite, Reasoning int64
	// CacheWrite1h is the part of CacheWrite that went to Anthropic's
	// one-hour cache (priced higher than the five-minute one); only native
	// Anthropic answers report it.
	CacheWrite1h int64
	ServiceTier  string
}

// Total is Input + Output.
func (u Usage) Total() int64 { return u.Input + u.Output }

// uncached is Anthropic's input_tokens: the prompt tokens neither read from
// nor written to the cache.
func (u Usage) uncached() int64 { return max(u.Input-u.CacheRead-u.CacheWrite, 0) }

// UsageOf extracts usage from a complete non-stream response body of family
// f. A body without usage (or not JSON) gives the zero Usage.
func UsageOf(f protocol.Family, body []byte) Usage {
	switch f {
	case protocol.Anthropic:
		// Found in place: gjson.GetBytes copies what it finds, and this
		// runs on every answer (perf).
		var a anthropicCounts
		a.mergeRaw(jsonwalk.Member(jsonwalk.View(body), "usage"))
		return a.usage()
	case protocol.OpenAI:
		u := chatUsage(gjson.GetBytes(body, "usage"))
		u.ServiceTier = gjson.GetBytes(body, "service_tier").Str
		return u
	case protocol.Responses:
		u := responsesUsage(gjson.GetBytes(body, "usage"))
		u.ServiceTier = gjson.GetBytes(body, "service_tier").Str
		return u
	case protocol.Gemini:
		return geminiUsage(gjson.GetBytes(body, "usageMetadata"))
	}
	return Usage{}
}

// UsageTracker reads usage from a native (unconverted) stream as its events
// pass, without copying them. The zero value tracks nothing; use
// NewUsageTracker.
type UsageTracker struct {
	f protocol.Family
	u Usage
	a anthropicCounts // Anthropic splits usage over message_start and message_delta
}

// NewUsageTracker returns a tracker for a stream of family f.
func NewUsageTracker(f protocol.Family) *UsageTracker { return &UsageTracker{f: f} }

var usageMark = []byte(`"usage`) // matches "usage" and "usageMetadata"

// Observe looks at one event. Events that cannot carry usage cost one byte
// scan; it never allocates.
func (t *UsageTracker) Observe(ev *protocol.Event) {
	if !bytes.Contains(ev.Data, usageMark) || !jsonwalk.Valid(jsonwalk.View(ev.Data)) {
		return
	}
	data := bstr(ev.Data)
	switch t.f {
	case protocol.Anthropic:
		switch gjson.Get(data, "type").Str {
		case "message_start":
			t.a.merge(gjson.Get(data, "message.usage"))
		case "message_delta":
			t.a.merge(gjson.Get(data, "usage"))
		default:
			return
		}
		t.u = t.a.usage()
	case protocol.OpenAI:
		if r := gjson.Get(data, "usage"); r.IsObject() {
			t.u = chatUsage(r)
			t.u.ServiceTier = gjson.Get(data, "service_tier").Str
		}
	case protocol.Responses:
		if r := gjson.Get(data, "response.usage"); r.IsObject() {
			t.u = responsesUsage(r)
			t.u.ServiceTier = gjson.Get(data, "response.service_tier").Str
		}
	case protocol.Gemini:
		if r := gjson.Get(data, "usageMetadata"); r.IsObject() {
			t.u = geminiUsage(r)
		}
	}
}

// Usage returns what has been seen so far.
func (t *UsageTracker) Usage() Usage { return t.u }

// anthropicCounts keeps Anthropic's own fields: message_delta repeats some of
// them cumulatively and a field it leaves out keeps its message_start value.
type anthropicCounts struct{ in, cacheRead, cacheWrite, cacheWrite1h, out, thinking int64 }

func (a *anthropicCounts) merge(r gjson.Result) {
	if r.IsObject() {
		a.mergeRaw(r.Raw)
	}
}

// mergeRaw is merge of a usage object's raw JSON; anything else merges
// nothing.
func (a *anthropicCounts) mergeRaw(raw string) {
	set := func(dst *int64, raw string) {
		if n, ok := jsonwalk.Int(raw); ok {
			*dst = n
		}
	}
	// One walk over the members: a Get per field walked the object six
	// times on every request (perf). jsonwalk, not gjson: see
	// its package comment.
	jsonwalk.Members(raw, func(k, v string) bool {
		switch k {
		case "input_tokens":
			set(&a.in, v)
		case "cache_read_input_tokens":
			set(&a.cacheRead, v)
		case "cache_creation_input_tokens":
			set(&a.cacheWrite, v)
		case "cache_creation":
			set(&a.cacheWrite1h, jsonwalk.Member(v, "ephemeral_1h_input_tokens"))
		case "output_tokens":
			set(&a.out, v)
		case "output_tokens_details":
			set(&a.thinking, jsonwalk.Member(v, "thinking_tokens"))
		}
		return true
	})
}

func (a *anthropicCounts) usage() Usage {
	return Usage{
		Input:        a.in + a.cacheRead + a.cacheWrite,
		Output:       a.out,
		CacheRead:    a.cacheRead,
		CacheWrite:   a.cacheWrite,
		CacheWrite1h: min(a.cacheWrite1h, a.cacheWrite),
		Reasoning:    a.thinking,
	}
}

func chatUsage(r gjson.Result) Usage {
	if !r.IsObject() {
		return Usage{}
	}
	u := r.Raw
	in := jsonwalk.Member(u, "prompt_tokens_details")
	return Usage{
		Input:      jsonwalk.IntOf(u, "prompt_tokens"),
		Output:     jsonwalk.IntOf(u, "completion_tokens"),
		CacheRead:  jsonwalk.IntOf(in, "cached_tokens"),
		CacheWrite: jsonwalk.IntOf(in, "cache_write_tokens"),
		Reasoning:  jsonwalk.IntOf(jsonwalk.Member(u, "completion_tokens_details"), "reasoning_tokens"),
	}
}

func responsesUsage(r gjson.Result) Usage {
	if !r.IsObject() {
		return Usage{}
	}
	u := r.Raw
	in := jsonwalk.Member(u, "input_tokens_details")
	return Usage{
		Input:      jsonwalk.IntOf(u, "input_tokens"),
		Output:     jsonwalk.IntOf(u, "output_tokens"),
		CacheRead:  jsonwalk.IntOf(in, "cached_tokens"),
		CacheWrite: jsonwalk.IntOf(in, "cache_write_tokens"),
		Reasoning:  jsonwalk.IntOf(jsonwalk.Member(u, "output_tokens_details"), "reasoning_tokens"),
	}
}

// geminiUsage folds toolUsePromptTokenCount (prompt tokens of server-side
// tool use, which totalTokenCount includes) into Input.
func geminiUsage(r gjson.Result) Usage {
	if !r.IsObject() {
		return Usage{}
	}
	u := r.Raw
	thoughts := jsonwalk.IntOf(u, "thoughtsTokenCount")
	return Usage{
		Input:     jsonwalk.IntOf(u, "promptTokenCount") + jsonwalk.IntOf(u, "toolUsePromptTokenCount"),
		Output:    jsonwalk.IntOf(u, "candidatesTokenCount") + thoughts,
		CacheRead: jsonwalk.IntOf(u, "cachedContentTokenCount"),
		Reasoning: thoughts,
	}
}

// The writers below render a Usage in each family's own usage object.

func wAnthropicUsage(dst []byte, u Usage) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = wjInt(dst, u.uncached())
	dst = append(dst, `,"cache_creation_input_tokens":`...)
	dst = wjInt(dst, u.CacheWrite)
	dst = append(dst, `,"cache_read_input_tokens":`...)
	dst = wjInt(dst, u.CacheRead)
	dst = append(dst, `,"output_tokens":`...)
	dst = wjInt(dst, u.Output)
	if u.Reasoning > 0 {
		dst = append(dst, `,"output_tokens_details":{"thinking_tokens":`...)
		dst = wjInt(dst, u.Reasoning)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

func wChatUsage(dst []byte, u Usage) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = wjInt(dst, u.Input)
	dst = append(dst, `,"completion_tokens":`...)
	dst = wjInt(dst, u.Output)
	dst = append(dst, `,"total_tokens":`...)
	dst = wjInt(dst, u.Total())
	dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
	dst = wjInt(dst, u.CacheRead)
	if u.CacheWrite > 0 {
		dst = append(dst, `,"cache_write_tokens":`...)
		dst = wjInt(dst, u.CacheWrite)
	}
	dst = append(dst, `},"completion_tokens_details":{"reasoning_tokens":`...)
	dst = wjInt(dst, u.Reasoning)
	return append(dst, `}}`...)
}

func wResponsesUsage(dst []byte, u Usage) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = wjInt(dst, u.Input)
	dst = append(dst, `,"input_tokens_details":{"cached_tokens":`...)
	dst = wjInt(dst, u.CacheRead)
	if u.CacheWrite > 0 {
		dst = append(dst, `,"cache_write_tokens":`...)
		dst = wjInt(dst, u.CacheWrite)
	}
	dst = append(dst, `},"output_tokens":`...)
	dst = wjInt(dst, u.Output)
	dst = append(dst, `,"output_tokens_details":{"reasoning_tokens":`...)
	dst = wjInt(dst, u.Reasoning)
	dst = append(dst, `},"total_tokens":`...)
	dst = wjInt(dst, u.Total())
	return append(dst, '}')
}

// wGeminiUsage leaves out the zero optional counts, as Gemini does.
func wGeminiUsage(dst []byte, u Usage) []byte {
	dst = append(dst, `{"promptTokenCount":`...)
	dst = wjInt(dst, u.Input)
	dst = append(dst, `,"candidatesTokenCount":`...)
	dst = wjInt(dst, max(u.Output-u.Reasoning, 0))
	dst = append(dst, `,"totalTokenCount":`...)
	dst = wjInt(dst, u.Total())
	if u.CacheRead > 0 {
		dst = append(dst, `,"cachedContentTokenCount":`...)
		dst = wjInt(dst, u.CacheRead)
	}
	if u.Reasoning > 0 {
		dst = append(dst, `,"thoughtsTokenCount":`...)
		dst = wjInt(dst, u.Reasoning)
	}
	return append(dst, '}')
}
