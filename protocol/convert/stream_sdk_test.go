package convert

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	openai "github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"

	"github.com/ccload/ccload/protocol"
)

// These tests read the converted output with the official SDKs, as the real
// clients will: the Anthropic stream decoder and Message.Accumulate, the
// OpenAI chat stream and ChatCompletionAccumulator, the OpenAI Responses
// stream, and the genai client's SSE reader. Every corpus fixture goes along
// every path; what the SDK sees is checked against what the fixture says,
// written out by hand below (not derived from the converter).

// sdkCall is a tool call as a client sees it: name and canonical arguments.
type sdkCall struct{ name, args string }

// sdkWant is what every client must see for a corpus case.
type sdkWant struct {
	text      string
	reasoning bool
	calls     []sdkCall
	stop      stopKind // class: stopEnd, stopToolUse or stopMaxTokens
	usage     map[protocol.Family]Usage
}

func u(in, out int64) Usage { return Usage{Input: in, Output: out} }

var sdkCases = map[string]sdkWant{
	"text": {
		text: "Grüße! Here is a \"quote\" and a line break:\n<done> & ok", stop: stopEnd,
		usage: map[protocol.Family]Usage{protocol.Anthropic: u(25, 18), protocol.OpenAI: u(19, 18), protocol.Responses: u(19, 18), protocol.Gemini: u(9, 18)},
	},
	"tool_call": {
		text:  "I'll check the weather in San Francisco for you.",
		calls: []sdkCall{{"get_weather", `{"location":"San Francisco, CA","unit":"celsius"}`}}, stop: stopToolUse,
		usage: map[protocol.Family]Usage{protocol.Anthropic: u(412, 89), protocol.OpenAI: u(161, 33), protocol.Responses: u(98, 40), protocol.Gemini: u(57, 28)},
	},
	"parallel_tools": {
		calls: []sdkCall{{"get_weather", `{"location":"Paris"}`}, {"get_time", `{"timezone":"Europe/Paris"}`}}, stop: stopToolUse,
		usage: map[protocol.Family]Usage{protocol.Anthropic: u(520, 102), protocol.OpenAI: u(180, 52), protocol.Responses: u(120, 61), protocol.Gemini: u(64, 20)},
	},
	"reasoning": {
		text: "17 × 24 = **408**.", reasoning: true, stop: stopEnd,
		usage: map[protocol.Family]Usage{
			protocol.Anthropic: {Input: 48, Output: 96, Reasoning: 61}, protocol.OpenAI: {Input: 21, Output: 96, Reasoning: 61},
			protocol.Responses: {Input: 21, Output: 96, Reasoning: 61}, protocol.Gemini: {Input: 12, Output: 96, Reasoning: 61},
		},
	},
	"reasoning_tool": {
		reasoning: true, calls: []sdkCall{{"get_weather", `{"location":"Oslo"}`}}, stop: stopToolUse,
		usage: map[protocol.Family]Usage{
			protocol.Anthropic: {Input: 630, Output: 77, Reasoning: 25}, protocol.OpenAI: {Input: 140, Output: 77, Reasoning: 25},
			protocol.Responses: {Input: 140, Output: 77, Reasoning: 25}, protocol.Gemini: {Input: 70, Output: 37, Reasoning: 25},
		},
	},
	"redacted_thinking": {
		text: "Here is the answer.", stop: stopEnd,
		usage: map[protocol.Family]Usage{protocol.Anthropic: u(52, 40)},
	},
	"cache_usage": {
		text: "Cached context loaded.", stop: stopEnd,
		usage: map[protocol.Family]Usage{
			protocol.Anthropic: {Input: 2112, Output: 7, CacheRead: 1800, CacheWrite: 300}, protocol.OpenAI: {Input: 2112, Output: 7, CacheRead: 1792},
			protocol.Responses: {Input: 2112, Output: 7, CacheRead: 1792}, protocol.Gemini: {Input: 2112, Output: 7, CacheRead: 1792},
		},
	},
	"max_tokens": {
		text: "Once upon a time, in a land far away, there lived a", stop: stopMaxTokens,
		usage: map[protocol.Family]Usage{protocol.Anthropic: u(30, 16), protocol.OpenAI: u(22, 16), protocol.Responses: u(22, 16), protocol.Gemini: u(8, 16)},
	},
}

// sdkView is what a client SDK saw, in canonical terms.
type sdkView struct {
	text      string
	reasoning bool
	calls     []sdkCall
	stop      string // the client family's own value
	usage     Usage
	err       error
}

// clientStop is the stop value each client family reports for a class.
func clientStop(f protocol.Family, s stopKind) string {
	switch f {
	case protocol.Anthropic:
		return s.anthropic()
	case protocol.OpenAI:
		return s.chat()
	case protocol.Responses:
		st, _ := s.responses()
		return st
	}
	return s.gemini()
}

// clientUsage is the usage a client can see: Gemini has no cache-write field.
func clientUsage(f protocol.Family, u Usage) Usage {
	if f == protocol.Gemini {
		u.CacheWrite = 0
	}
	return u
}

func corpusCases(t *testing.T, from protocol.Family, ext string) map[string][]byte {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", string(from), "*"+ext))
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ext)] = b
	}
	return out
}

func TestSDKParsesConvertedStreams(t *testing.T) {
	matrix := map[string]string{}
	for _, from := range protocol.Families {
		for name, in := range corpusCases(t, from, ".sse") {
			if name == "error_mid" {
				continue
			}
			want, ok := sdkCases[name]
			if !ok {
				t.Errorf("corpus case %s has no SDK expectation", name)
				continue
			}
			for _, to := range protocol.Families {
				if to == from {
					continue
				}
				ok := t.Run(fmt.Sprintf("%s-%s/%s", from, to, name), func(t *testing.T) {
					out, err := runStream(t, from, to, in, StreamOptions{})
					if err != nil {
						t.Fatalf("conversion failed: %v", err)
					}
					v := sdkReadStream(t, to, out)
					checkView(t, to, v, want, want.usage[from])
				})
				key := string(from) + "-" + string(to)
				if !ok {
					matrix[key] = "FAIL"
				} else if matrix[key] == "" {
					matrix[key] = "ok"
				}
			}
		}
	}
	logMatrix(t, "stream (upstream rows, client columns)", matrix)
}

func TestSDKParsesConvertedResponses(t *testing.T) {
	matrix := map[string]string{}
	for _, from := range protocol.Families {
		for name, in := range corpusCases(t, from, ".json") {
			want, ok := sdkCases[name]
			if !ok {
				t.Errorf("corpus case %s has no SDK expectation", name)
				continue
			}
			for _, to := range protocol.Families {
				if to == from {
					continue
				}
				ok := t.Run(fmt.Sprintf("%s-%s/%s", from, to, name), func(t *testing.T) {
					out, err := response(from, to, in, testModel, ResponseOptions{}, testClock{})
					if err != nil {
						t.Fatalf("conversion failed: %v", err)
					}
					v := sdkReadResponse(t, to, out)
					checkView(t, to, v, want, want.usage[from])
				})
				key := string(from) + "-" + string(to)
				if !ok {
					matrix[key] = "FAIL"
				} else if matrix[key] == "" {
					matrix[key] = "ok"
				}
			}
		}
	}
	logMatrix(t, "non-stream (upstream rows, client columns)", matrix)
}

func checkView(t *testing.T, to protocol.Family, v sdkView, want sdkWant, wantUsage Usage) {
	t.Helper()
	if v.err != nil {
		t.Fatalf("SDK error: %v", v.err)
	}
	if v.text != want.text {
		t.Errorf("text = %q, want %q", v.text, want.text)
	}
	if v.reasoning != want.reasoning {
		t.Errorf("reasoning seen = %v, want %v", v.reasoning, want.reasoning)
	}
	if fmt.Sprint(v.calls) != fmt.Sprint(want.calls) {
		t.Errorf("calls = %v, want %v", v.calls, want.calls)
	}
	if ws := clientStop(to, want.stop); v.stop != ws {
		t.Errorf("stop = %q, want %q", v.stop, ws)
	}
	if wu := clientUsage(to, wantUsage); v.usage != wu {
		t.Errorf("usage = %+v, want %+v", v.usage, wu)
	}
}

func logMatrix(t *testing.T, title string, m map[string]string) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%-10s", title, "")
	for _, to := range protocol.Families {
		fmt.Fprintf(&b, " %-10s", to)
	}
	for _, from := range protocol.Families {
		fmt.Fprintf(&b, "\n%-10s", from)
		for _, to := range protocol.Families {
			cell := "native"
			if from != to {
				cell = m[string(from)+"-"+string(to)]
			}
			fmt.Fprintf(&b, " %-10s", cell)
		}
	}
	t.Log(b.String())
}

// canonArgs re-encodes JSON arguments so key order and spacing do not matter.
func canonArgs(t *testing.T, s string) string {
	t.Helper()
	c, err := canonData([]byte(s))
	if err != nil {
		t.Errorf("tool arguments %q are not JSON: %v", s, err)
		return s
	}
	return c
}

// serveSSE starts a server that answers every request with body as SSE.
func serveSSE(t *testing.T, body []byte) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func sdkReadStream(t *testing.T, f protocol.Family, body []byte) sdkView {
	t.Helper()
	srv := serveSSE(t, body)
	ctx := context.Background()
	var v sdkView
	switch f {
	case protocol.Anthropic:
		c := anthropic.NewClient(aoption.WithBaseURL(srv.URL), aoption.WithAPIKey("k"), aoption.WithMaxRetries(0))
		s := c.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
			Model: "m", MaxTokens: 16, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
		})
		var msg anthropic.Message
		for s.Next() {
			if err := msg.Accumulate(s.Current()); err != nil {
				v.err = err
				return v
			}
		}
		if v.err = s.Err(); v.err != nil {
			return v
		}
		v = anthropicView(t, msg)
	case protocol.OpenAI:
		c := openai.NewClient(ooption.WithBaseURL(srv.URL), ooption.WithAPIKey("k"), ooption.WithMaxRetries(0))
		s := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		})
		var acc openai.ChatCompletionAccumulator
		var cacheWrite int64
		for s.Next() {
			ch := s.Current()
			// The accumulator sums usage but not cache_write_tokens; read it
			// from the usage chunk itself.
			cacheWrite += ch.Usage.PromptTokensDetails.CacheWriteTokens
			if !acc.AddChunk(ch) {
				v.err = fmt.Errorf("accumulator rejected chunk %s", ch.RawJSON())
				return v
			}
			if len(ch.Choices) > 0 {
				if rc, ok := ch.Choices[0].Delta.JSON.ExtraFields["reasoning_content"]; ok && rc.Raw() != "" && rc.Raw() != "null" {
					v.reasoning = true
				}
			}
		}
		if v.err = s.Err(); v.err != nil {
			return v
		}
		r := v.reasoning
		v = chatView(t, acc.ChatCompletion)
		v.reasoning = v.reasoning || r
		v.usage.CacheWrite = cacheWrite
	case protocol.Responses:
		c := openai.NewClient(ooption.WithBaseURL(srv.URL), ooption.WithAPIKey("k"), ooption.WithMaxRetries(0))
		s := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{
			Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
		})
		var final *responses.Response
		for s.Next() {
			ev := s.Current()
			switch ev.Type {
			case "response.completed", "response.incomplete":
				r := ev.Response
				final = &r
			case "error":
				v.err = fmt.Errorf("error event: %s", ev.Message)
				return v
			}
		}
		if v.err = s.Err(); v.err != nil {
			return v
		}
		if final == nil {
			v.err = fmt.Errorf("no response.completed")
			return v
		}
		v = responsesView(t, *final)
	case protocol.Gemini:
		c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
		if err != nil {
			t.Fatal(err)
		}
		var last *genai.GenerateContentResponse
		var all genai.GenerateContentResponse
		all.Candidates = []*genai.Candidate{{Content: &genai.Content{}}}
		for r, err := range c.Models.GenerateContentStream(ctx, "m", genai.Text("hi"), nil) {
			if err != nil {
				v.err = err
				return v
			}
			last = r
			if len(r.Candidates) > 0 && r.Candidates[0].Content != nil {
				all.Candidates[0].Content.Parts = append(all.Candidates[0].Content.Parts, r.Candidates[0].Content.Parts...)
			}
		}
		if last == nil || len(last.Candidates) == 0 {
			v.err = fmt.Errorf("no chunks")
			return v
		}
		all.Candidates[0].FinishReason = last.Candidates[0].FinishReason
		all.UsageMetadata = last.UsageMetadata
		v = geminiView(t, &all)
	}
	return v
}

func sdkReadResponse(t *testing.T, f protocol.Family, body []byte) sdkView {
	t.Helper()
	var v sdkView
	switch f {
	case protocol.Anthropic:
		var msg anthropic.Message
		if v.err = json.Unmarshal(body, &msg); v.err == nil {
			v = anthropicView(t, msg)
		}
	case protocol.OpenAI:
		var cc openai.ChatCompletion
		if v.err = json.Unmarshal(body, &cc); v.err == nil {
			v = chatView(t, cc)
		}
	case protocol.Responses:
		var r responses.Response
		if v.err = json.Unmarshal(body, &r); v.err == nil {
			v = responsesView(t, r)
		}
	case protocol.Gemini:
		var r genai.GenerateContentResponse
		if v.err = json.Unmarshal(body, &r); v.err == nil {
			v = geminiView(t, &r)
		}
	}
	return v
}

func anthropicView(t *testing.T, msg anthropic.Message) sdkView {
	var v sdkView
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			v.text += b.Text
		case "thinking":
			v.reasoning = v.reasoning || b.Thinking != ""
		case "tool_use":
			v.calls = append(v.calls, sdkCall{b.Name, canonArgs(t, string(b.Input))})
		}
	}
	v.stop = string(msg.StopReason)
	us := msg.Usage
	v.usage = Usage{
		Input:  us.InputTokens + us.CacheReadInputTokens + us.CacheCreationInputTokens,
		Output: us.OutputTokens, CacheRead: us.CacheReadInputTokens, CacheWrite: us.CacheCreationInputTokens,
		Reasoning: us.OutputTokensDetails.ThinkingTokens,
	}
	return v
}

func chatView(t *testing.T, cc openai.ChatCompletion) sdkView {
	var v sdkView
	if len(cc.Choices) == 0 {
		v.err = fmt.Errorf("no choices")
		return v
	}
	ch := cc.Choices[0]
	v.text = ch.Message.Content
	if rc, ok := ch.Message.JSON.ExtraFields["reasoning_content"]; ok && rc.Raw() != "" && rc.Raw() != "null" {
		v.reasoning = true
	}
	for _, tc := range ch.Message.ToolCalls {
		if tc.ID == "" || tc.Type != "function" {
			v.err = fmt.Errorf("tool call without id or type: %s", tc.RawJSON())
		}
		v.calls = append(v.calls, sdkCall{tc.Function.Name, canonArgs(t, tc.Function.Arguments)})
	}
	v.stop = ch.FinishReason
	us := cc.Usage
	v.usage = Usage{
		Input: us.PromptTokens, Output: us.CompletionTokens, CacheRead: us.PromptTokensDetails.CachedTokens,
		CacheWrite: us.PromptTokensDetails.CacheWriteTokens, Reasoning: us.CompletionTokensDetails.ReasoningTokens,
	}
	return v
}

func responsesView(t *testing.T, r responses.Response) sdkView {
	var v sdkView
	v.text = r.OutputText()
	for _, it := range r.Output {
		switch it.Type {
		case "reasoning":
			for _, s := range it.Summary {
				v.reasoning = v.reasoning || s.Text != ""
			}
		case "function_call":
			raw := gjson.Parse(it.RawJSON())
			if raw.Get("call_id").Str == "" {
				v.err = fmt.Errorf("function_call without call_id")
			}
			v.calls = append(v.calls, sdkCall{it.Name, canonArgs(t, raw.Get("arguments").Str)})
		}
	}
	v.stop = string(r.Status)
	us := r.Usage
	v.usage = Usage{
		Input: us.InputTokens, Output: us.OutputTokens, CacheRead: us.InputTokensDetails.CachedTokens,
		CacheWrite: us.InputTokensDetails.CacheWriteTokens, Reasoning: us.OutputTokensDetails.ReasoningTokens,
	}
	return v
}

func geminiView(t *testing.T, r *genai.GenerateContentResponse) sdkView {
	var v sdkView
	if len(r.Candidates) == 0 || r.Candidates[0].Content == nil {
		v.err = fmt.Errorf("no candidate content")
		return v
	}
	for _, p := range r.Candidates[0].Content.Parts {
		switch {
		case p.Thought:
			v.reasoning = v.reasoning || p.Text != ""
		case p.FunctionCall != nil:
			args, _ := json.Marshal(p.FunctionCall.Args)
			if p.FunctionCall.Args == nil {
				args = []byte("{}")
			}
			v.calls = append(v.calls, sdkCall{p.FunctionCall.Name, canonArgs(t, string(args))})
		default:
			v.text += p.Text
		}
	}
	v.stop = string(r.Candidates[0].FinishReason)
	if um := r.UsageMetadata; um != nil {
		v.usage = Usage{
			Input: int64(um.PromptTokenCount + um.ToolUsePromptTokenCount), Output: int64(um.CandidatesTokenCount + um.ThoughtsTokenCount),
			CacheRead: int64(um.CachedContentTokenCount), Reasoning: int64(um.ThoughtsTokenCount),
		}
	}
	return v
}

// TestSDKSeesMidStreamErrors checks that an upstream error after some output
// reaches every client SDK as an error carrying the upstream message.
func TestSDKSeesMidStreamErrors(t *testing.T) {
	for _, from := range protocol.Families {
		in := corpusCases(t, from, ".sse")["error_mid"]
		if in == nil {
			t.Fatalf("no error_mid fixture for %s", from)
		}
		msg := map[protocol.Family]string{
			protocol.Anthropic: "Overloaded", protocol.OpenAI: "The server had an error",
			protocol.Responses: "Rate limit reached", protocol.Gemini: "The model is overloaded",
		}[from]
		for _, to := range protocol.Families {
			if to == from {
				continue
			}
			t.Run(string(from)+"-"+string(to), func(t *testing.T) {
				out, err := runStream(t, from, to, in, StreamOptions{})
				if err == nil {
					t.Fatal("conversion reported no error")
				}
				v := sdkReadStream(t, to, out)
				if v.err == nil || !strings.Contains(v.err.Error(), msg) {
					t.Fatalf("SDK error = %v, want one containing %q", v.err, msg)
				}
			})
		}
	}
}

// TestSDKCorpusIsComplete keeps the expectation table and the corpus in step.
func TestSDKCorpusIsComplete(t *testing.T) {
	var names []string
	for n := range sdkCases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for f := range sdkCases[n].usage {
			p := filepath.Join("testdata", "corpus", string(f), n+".sse")
			if _, err := os.Stat(p); err != nil {
				t.Errorf("expectation for %s/%s but no fixture %s", f, n, p)
			}
		}
	}
}
