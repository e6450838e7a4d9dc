package engine_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"google.golang.org/genai"
)

// The conformance drivers: one per client family, each using the family's
// official SDK the way an application would (the Anthropic accumulator, the
// OpenAI chat accumulator, the Responses event stream, the genai iterator)
// and reporting what it parsed as a confSeen.

const confToolDescription = "Get the current weather in a city."

// confToolSchema is the JSON Schema of get_weather's parameters.
func confToolSchema() map[string]any {
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{"city": map[string]any{"type": "string", "description": "City name"}},
		"required":   []string{"city"},
	}
}

func confAnthropic(ctx context.Context, t *testing.T, base, model string, c confCase, stream bool) confSeen {
	t.Helper()
	cl := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(testToken), aoption.WithMaxRetries(0))
	p := anthropic.MessageNewParams{
		Model:     model,
		MaxTokens: 4096,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(confPrompt(c)))},
	}
	if c.tools {
		schema := confToolSchema()
		tool := anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{
			Properties: schema["properties"], Required: []string{"city"},
		}, "get_weather")
		tool.OfTool.Description = anthropic.String(confToolDescription)
		p.Tools = []anthropic.ToolUnionParam{tool}
	}
	if c.think {
		p.Thinking = anthropic.ThinkingConfigParamOfEnabled(1024)
	}

	var msg anthropic.Message
	if stream {
		s := cl.Messages.NewStreaming(ctx, p)
		stopped := false
		for s.Next() {
			ev := s.Current()
			if err := msg.Accumulate(ev); err != nil {
				t.Fatalf("anthropic SDK: accumulate %s: %v", ev.Type, err)
			}
			stopped = stopped || ev.Type == "message_stop"
		}
		if err := s.Err(); err != nil {
			t.Fatalf("anthropic SDK stream: %v", err)
		}
		if !stopped {
			t.Error("anthropic stream ended without message_stop")
		}
	} else {
		m, err := cl.Messages.New(ctx, p)
		if err != nil {
			t.Fatalf("anthropic SDK: %v", err)
		}
		msg = *m
	}

	seen := confSeen{stop: string(msg.StopReason), usage: map[string]int64{
		"input_tokens":                          msg.Usage.InputTokens,
		"cache_read_input_tokens":               msg.Usage.CacheReadInputTokens,
		"cache_creation_input_tokens":           msg.Usage.CacheCreationInputTokens,
		"output_tokens":                         msg.Usage.OutputTokens,
		"output_tokens_details.thinking_tokens": msg.Usage.OutputTokensDetails.ThinkingTokens,
	}}
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			seen.text += b.Text
		case "thinking":
			seen.thinking += b.Thinking
			seen.signature += b.Signature
		case "tool_use":
			seen.calls = append(seen.calls, confSeenCall{b.ID, b.Name, string(b.Input)})
		}
	}
	return seen
}

func confOpenAIChat(ctx context.Context, t *testing.T, base, model string, c confCase, stream bool) confSeen {
	t.Helper()
	cl := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(testToken), ooption.WithMaxRetries(0))
	p := openai.ChatCompletionNewParams{
		Model:    model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(confPrompt(c))},
	}
	if c.tools {
		p.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Description: openai.String(confToolDescription), Parameters: confToolSchema(),
		})}
	}
	if c.think {
		p.ReasoningEffort = shared.ReasoningEffortLow
	}

	var seen confSeen
	var msg openai.ChatCompletionMessage
	var finish string
	var usage openai.CompletionUsage
	if stream {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		s := cl.Chat.Completions.NewStreaming(ctx, p)
		var acc openai.ChatCompletionAccumulator
		usageChunks := 0
		for s.Next() {
			ch := s.Current()
			if !acc.AddChunk(ch) {
				t.Errorf("openai SDK accumulator rejected chunk %s (id changed or bad index)", ch.RawJSON())
			}
			for _, choice := range ch.Choices {
				seen.thinking += confExtraString(t, choice.Delta.JSON.ExtraFields["reasoning_content"].Raw())
			}
			if ch.JSON.Usage.Valid() {
				usage = ch.Usage
				usageChunks++
			}
		}
		if err := s.Err(); err != nil {
			t.Fatalf("openai SDK stream: %v", err)
		}
		if usageChunks != 1 {
			t.Errorf("openai stream has %d usage chunks, want 1", usageChunks)
		}
		if len(acc.Choices) != 1 {
			t.Fatalf("openai stream has %d choices, want 1", len(acc.Choices))
		}
		msg, finish = acc.Choices[0].Message, string(acc.Choices[0].FinishReason)
	} else {
		resp, err := cl.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatalf("openai SDK: %v", err)
		}
		if len(resp.Choices) != 1 {
			t.Fatalf("openai response has %d choices, want 1", len(resp.Choices))
		}
		msg, finish, usage = resp.Choices[0].Message, string(resp.Choices[0].FinishReason), resp.Usage
		seen.thinking = confExtraString(t, msg.JSON.ExtraFields["reasoning_content"].Raw())
	}

	seen.text, seen.stop = msg.Content, finish
	for _, tc := range msg.ToolCalls {
		seen.calls = append(seen.calls, confSeenCall{tc.ID, tc.Function.Name, tc.Function.Arguments})
	}
	seen.usage = map[string]int64{
		"prompt_tokens":                              usage.PromptTokens,
		"completion_tokens":                          usage.CompletionTokens,
		"total_tokens":                               usage.TotalTokens,
		"prompt_tokens_details.cached_tokens":        usage.PromptTokensDetails.CachedTokens,
		"prompt_tokens_details.cache_write_tokens":   usage.PromptTokensDetails.CacheWriteTokens,
		"completion_tokens_details.reasoning_tokens": usage.CompletionTokensDetails.ReasoningTokens,
	}
	return seen
}

func confResponses(ctx context.Context, t *testing.T, base, model string, c confCase, stream bool) confSeen {
	t.Helper()
	cl := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(testToken), ooption.WithMaxRetries(0))
	p := responses.ResponseNewParams{
		Model: model,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(confPrompt(c))},
	}
	if c.tools {
		tool := responses.ToolParamOfFunction("get_weather", confToolSchema(), false)
		tool.OfFunction.Description = openai.String(confToolDescription)
		p.Tools = []responses.ToolUnionParam{tool}
	}
	if c.think {
		p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffortLow, Summary: shared.ReasoningSummaryAuto}
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
		p.Store = openai.Bool(false)
	}

	var resp *responses.Response
	if stream {
		s := cl.Responses.NewStreaming(ctx, p)
		var deltas strings.Builder
		var seq int64 = -1
		for s.Next() {
			ev := s.Current()
			if ev.SequenceNumber <= seq {
				t.Errorf("responses stream: %s has sequence_number %d after %d", ev.Type, ev.SequenceNumber, seq)
			}
			seq = ev.SequenceNumber
			switch ev.Type {
			case "response.output_text.delta":
				deltas.WriteString(ev.Delta)
			case "response.completed", "response.incomplete":
				r := ev.Response
				resp = &r
			case "response.failed", "error":
				t.Fatalf("responses stream: %s: %s", ev.Type, ev.RawJSON())
			}
		}
		if err := s.Err(); err != nil {
			t.Fatalf("openai SDK responses stream: %v", err)
		}
		if resp == nil {
			t.Fatal("responses stream ended without response.completed")
		}
		if deltas.String() != resp.OutputText() {
			t.Errorf("responses stream: output_text deltas %q differ from the completed response's text %q", deltas.String(), resp.OutputText())
		}
	} else {
		var err error
		resp, err = cl.Responses.New(ctx, p)
		if err != nil {
			t.Fatalf("openai SDK responses: %v", err)
		}
	}

	seen := confSeen{text: resp.OutputText(), stop: string(resp.Status)}
	var summaries []string
	for _, it := range resp.Output {
		switch it.Type {
		case "reasoning":
			for _, s := range it.Summary {
				summaries = append(summaries, s.Text)
			}
			seen.signature += it.EncryptedContent
		case "function_call":
			fc := it.AsFunctionCall()
			seen.calls = append(seen.calls, confSeenCall{fc.CallID, fc.Name, fc.Arguments})
		}
	}
	seen.thinking = strings.Join(summaries, "\n\n")
	u := resp.Usage
	seen.usage = map[string]int64{
		"input_tokens":                            u.InputTokens,
		"input_tokens_details.cached_tokens":      u.InputTokensDetails.CachedTokens,
		"input_tokens_details.cache_write_tokens": u.InputTokensDetails.CacheWriteTokens,
		"output_tokens":                           u.OutputTokens,
		"output_tokens_details.reasoning_tokens":  u.OutputTokensDetails.ReasoningTokens,
		"total_tokens":                            u.TotalTokens,
	}
	return seen
}

func confGemini(ctx context.Context, t *testing.T, base, model string, c confCase, stream bool) confSeen {
	t.Helper()
	cl, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      testToken,
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: base},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &genai.GenerateContentConfig{}
	if c.tools {
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
			Name: "get_weather", Description: confToolDescription, ParametersJsonSchema: confToolSchema(),
		}}}}
	}
	if c.think {
		cfg.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: genai.Ptr[int32](1024)}
	}

	seen := confSeen{}
	var usage *genai.GenerateContentResponseUsageMetadata
	read := func(r *genai.GenerateContentResponse) {
		if r.UsageMetadata != nil {
			usage = r.UsageMetadata
		}
		if len(r.Candidates) == 0 {
			return
		}
		cand := r.Candidates[0]
		if cand.FinishReason != "" {
			seen.stop = string(cand.FinishReason)
		}
		if cand.Content == nil {
			return
		}
		for _, part := range cand.Content.Parts {
			if len(part.ThoughtSignature) > 0 {
				seen.signature += base64.StdEncoding.EncodeToString(part.ThoughtSignature)
			}
			switch {
			case part.FunctionCall != nil:
				args, err := json.Marshal(part.FunctionCall.Args)
				if err != nil {
					t.Fatal(err)
				}
				seen.calls = append(seen.calls, confSeenCall{part.FunctionCall.ID, part.FunctionCall.Name, string(args)})
			case part.Thought:
				seen.thinking += part.Text
			default:
				seen.text += part.Text
			}
		}
	}
	if stream {
		for chunk, err := range cl.Models.GenerateContentStream(ctx, model, genai.Text(confPrompt(c)), cfg) {
			if err != nil {
				t.Fatalf("genai SDK stream: %v", err)
			}
			read(chunk)
		}
	} else {
		resp, err := cl.Models.GenerateContent(ctx, model, genai.Text(confPrompt(c)), cfg)
		if err != nil {
			t.Fatalf("genai SDK: %v", err)
		}
		read(resp)
	}
	if usage == nil {
		t.Error("gemini: no usageMetadata")
		usage = &genai.GenerateContentResponseUsageMetadata{}
	}
	seen.usage = map[string]int64{
		"promptTokenCount":        int64(usage.PromptTokenCount),
		"candidatesTokenCount":    int64(usage.CandidatesTokenCount),
		"totalTokenCount":         int64(usage.TotalTokenCount),
		"cachedContentTokenCount": int64(usage.CachedContentTokenCount),
		"thoughtsTokenCount":      int64(usage.ThoughtsTokenCount),
	}
	return seen
}

// confExtraString decodes a JSON string field the SDK kept as an extra field;
// absent or null is "".
func confExtraString(t *testing.T, raw string) string {
	t.Helper()
	if raw == "" || raw == "null" {
		return ""
	}
	var s string
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Errorf("extra field %s is not a JSON string", raw)
	}
	return s
}
