package mockupstream

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

func openaiClient(base, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(base+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

func chatParams(model string, includeUsage bool) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:    shared.ChatModel(model),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	}
	if includeUsage {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	return p
}

// chatStream runs a streaming request through the SDK's accumulator and
// also collects the raw reasoning_content deltas, which the SDK keeps as an
// extra field.
func chatStream(t *testing.T, c openai.Client, p openai.ChatCompletionNewParams) (openai.ChatCompletionAccumulator, string, int, error) {
	t.Helper()
	stream := c.Chat.Completions.NewStreaming(testCtx(t), p)
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	var reasoning strings.Builder
	chunks := 0
	for stream.Next() {
		ch := stream.Current()
		chunks++
		if !acc.AddChunk(ch) {
			t.Fatalf("accumulator rejected chunk %d: %s", chunks, ch.RawJSON())
		}
		if len(ch.Choices) > 0 {
			if f, ok := ch.Choices[0].Delta.JSON.ExtraFields["reasoning_content"]; ok {
				s, err := strconv.Unquote(f.Raw())
				if err != nil {
					t.Fatalf("reasoning_content %s: %v", f.Raw(), err)
				}
				reasoning.WriteString(s)
			}
		}
	}
	return acc, reasoning.String(), chunks, stream.Err()
}

func checkChatUsage(t *testing.T, u openai.CompletionUsage, want Usage) {
	t.Helper()
	prompt := int64(want.Input + want.CacheRead + want.CacheWrite)
	if u.PromptTokens != prompt || u.CompletionTokens != int64(want.Output) || u.TotalTokens != prompt+int64(want.Output) ||
		u.PromptTokensDetails.CachedTokens != int64(want.CacheRead) ||
		u.CompletionTokensDetails.ReasoningTokens != int64(want.Reasoning) {
		t.Errorf("usage = %s, want %+v", u.RawJSON(), want)
	}
}

func TestChatSDKText(t *testing.T) {
	_, base := start(t, Options{})
	c := openaiClient(base, "sk-test")

	cc, err := c.Chat.Completions.New(testCtx(t), chatParams("gpt-5", false))
	if err != nil {
		t.Fatal(err)
	}
	if len(cc.Choices) != 1 || cc.Choices[0].Message.Content != DefaultText || cc.Choices[0].FinishReason != "stop" {
		t.Fatalf("completion = %s", cc.RawJSON())
	}
	if cc.Object != "chat.completion" || cc.Model != "gpt-5" {
		t.Errorf("object %q model %q", cc.Object, cc.Model)
	}
	checkChatUsage(t, cc.Usage, DefaultUsage())

	acc, _, chunks, err := chatStream(t, c, chatParams("gpt-5", true))
	if err != nil {
		t.Fatal(err)
	}
	if acc.Choices[0].Message.Content != DefaultText || acc.Choices[0].FinishReason != "stop" {
		t.Fatalf("streamed = %+v", acc.Choices)
	}
	if chunks < 5 {
		t.Errorf("%d chunks, want several deltas", chunks)
	}
	checkChatUsage(t, acc.Usage, DefaultUsage())

	// Without include_usage there is no usage chunk, as with the real API.
	acc, _, _, err = chatStream(t, c, chatParams("gpt-5", false))
	if err != nil {
		t.Fatal(err)
	}
	if acc.Usage.TotalTokens != 0 || acc.Choices[0].Message.Content != DefaultText {
		t.Errorf("usage %s sent without include_usage", acc.Usage.RawJSON())
	}
}

func TestChatSDKToolCallsAndReasoning(t *testing.T) {
	rep := Reply{
		Thinking:  "Need the weather twice.",
		ToolCalls: []ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "call_fixed", Name: "get_weather", Arguments: `{"city":"Tōkyō"}`}},
		Usage:     Usage{Input: 50, Output: 20, CacheRead: 10, Reasoning: 4},
	}
	_, base := start(t, script(rep))
	c := openaiClient(base, "k")

	check := func(t *testing.T, msg openai.ChatCompletionMessage, finish string) {
		if finish != "tool_calls" || len(msg.ToolCalls) != 2 {
			t.Fatalf("finish %q tool calls %+v", finish, msg.ToolCalls)
		}
		for i, tc := range msg.ToolCalls {
			if tc.Function.Name != "get_weather" || tc.ID == "" || tc.Type != "function" {
				t.Errorf("tool call %d = %+v", i, tc)
			}
			jsonEqual(t, tc.Function.Arguments, rep.ToolCalls[i].Arguments)
		}
		if msg.ToolCalls[1].ID != "call_fixed" || msg.ToolCalls[0].ID == msg.ToolCalls[1].ID {
			t.Errorf("ids %q %q", msg.ToolCalls[0].ID, msg.ToolCalls[1].ID)
		}
	}
	t.Run("non-stream", func(t *testing.T) {
		cc, err := c.Chat.Completions.New(testCtx(t), chatParams("m", false))
		if err != nil {
			t.Fatal(err)
		}
		check(t, cc.Choices[0].Message, cc.Choices[0].FinishReason)
		if r := cc.Choices[0].Message.JSON.ExtraFields["reasoning_content"].Raw(); r != strconv.Quote(rep.Thinking) {
			t.Errorf("reasoning_content = %s", r)
		}
		checkChatUsage(t, cc.Usage, rep.Usage)
	})
	t.Run("stream", func(t *testing.T) {
		acc, reasoning, _, err := chatStream(t, c, chatParams("m", true))
		if err != nil {
			t.Fatal(err)
		}
		check(t, acc.Choices[0].Message, acc.Choices[0].FinishReason)
		if reasoning != rep.Thinking {
			t.Errorf("reasoning deltas = %q", reasoning)
		}
		checkChatUsage(t, acc.Usage, rep.Usage)
	})
}

func TestChatSDKErrors(t *testing.T) {
	_, base := start(t, Options{Keys: []string{"good"}})
	var apiErr *openai.Error

	bad, good := openaiClient(base, "bad"), openaiClient(base, "good")
	_, err := bad.Chat.Completions.New(testCtx(t), chatParams("gpt-5", false))
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" {
		t.Fatalf("err = %v, want 401 invalid_api_key", err)
	}
	_, err = good.Chat.Completions.New(testCtx(t), chatParams("gpt-5-mock-fail-500", false))
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 || apiErr.Type != "server_error" {
		t.Fatalf("err = %v, want 500 server_error", err)
	}
	_, _, _, err = chatStream(t, good, chatParams("gpt-5-mock-soft-error", true))
	if err == nil || !strings.Contains(err.Error(), "overloaded") {
		t.Fatalf("stream err = %v, want the in-stream error", err)
	}
}
