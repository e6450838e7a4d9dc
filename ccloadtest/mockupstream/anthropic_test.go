package mockupstream

import (
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

func anthropicClient(base, key string) anthropic.Client {
	return anthropic.NewClient(option.WithBaseURL(base), option.WithAPIKey(key), option.WithMaxRetries(0))
}

func anthropicParams(model string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model: anthropic.Model(model), MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	}
}

// anthropicStream runs a streaming request and accumulates it the SDK's way.
func anthropicStream(t *testing.T, c anthropic.Client, p anthropic.MessageNewParams) (anthropic.Message, []string, error) {
	t.Helper()
	stream := c.Messages.NewStreaming(testCtx(t), p)
	defer stream.Close()
	var msg anthropic.Message
	var types []string
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		if err := msg.Accumulate(ev); err != nil {
			t.Fatalf("Accumulate(%s): %v", ev.Type, err)
		}
	}
	return msg, types, stream.Err()
}

func checkAnthropicUsage(t *testing.T, u anthropic.Usage, want Usage) {
	t.Helper()
	if u.InputTokens != int64(want.Input) || u.OutputTokens != int64(want.Output) ||
		u.CacheReadInputTokens != int64(want.CacheRead) || u.CacheCreationInputTokens != int64(want.CacheWrite) {
		t.Errorf("usage = in %d out %d read %d write %d, want %+v",
			u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, want)
	}
}

func TestAnthropicSDKText(t *testing.T) {
	_, base := start(t, Options{})
	c := anthropicClient(base, "sk-ant-test")

	msg, err := c.Messages.New(testCtx(t), anthropicParams("claude-sonnet-4-6"))
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Type != "text" || msg.Content[0].Text != DefaultText {
		t.Fatalf("content = %+v", msg.Content)
	}
	if msg.StopReason != anthropic.StopReasonEndTurn || msg.Model != "claude-sonnet-4-6" || !strings.HasPrefix(msg.ID, "msg_") {
		t.Errorf("stop %q model %q id %q", msg.StopReason, msg.Model, msg.ID)
	}
	checkAnthropicUsage(t, msg.Usage, DefaultUsage())

	smsg, types, err := anthropicStream(t, c, anthropicParams("claude-sonnet-4-6"))
	if err != nil {
		t.Fatal(err)
	}
	if len(smsg.Content) != 1 || smsg.Content[0].Text != DefaultText {
		t.Fatalf("streamed content = %+v", smsg.Content)
	}
	if n := strings.Count(strings.Join(types, " "), "content_block_delta"); n < 3 {
		t.Errorf("text came in %d deltas, want several", n)
	}
	if types[0] != "message_start" || types[len(types)-1] != "message_stop" || types[len(types)-2] != "message_delta" {
		t.Errorf("event order = %v", types)
	}
	if smsg.StopReason != anthropic.StopReasonEndTurn {
		t.Errorf("stop reason = %q", smsg.StopReason)
	}
	checkAnthropicUsage(t, smsg.Usage, DefaultUsage())
}

func TestAnthropicSDKToolCallsAndThinking(t *testing.T) {
	rep := Reply{
		Thinking: "Two lookups are needed.", ThinkingSignature: "sig-123",
		Text:      "Checking both.",
		ToolCalls: []ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris","days":3}`}, {ID: "toolu_fixed", Name: "get_time", Arguments: `{"tz":"Europe/Paris"}`}},
		Usage:     Usage{Input: 100, Output: 40, CacheRead: 7, CacheWrite: 3, Reasoning: 9},
	}
	_, base := start(t, script(rep))
	c := anthropicClient(base, "k")

	check := func(t *testing.T, msg anthropic.Message) {
		if len(msg.Content) != 4 {
			t.Fatalf("content = %+v", msg.Content)
		}
		th, tx, a, b := msg.Content[0], msg.Content[1], msg.Content[2], msg.Content[3]
		if th.Type != "thinking" || th.Thinking != rep.Thinking || th.Signature != rep.ThinkingSignature {
			t.Errorf("thinking block = %+v", th)
		}
		if tx.Type != "text" || tx.Text != rep.Text {
			t.Errorf("text block = %+v", tx)
		}
		if a.Type != "tool_use" || a.Name != "get_weather" || a.ID == "" {
			t.Errorf("tool block = %+v", a)
		}
		jsonEqual(t, string(a.Input), rep.ToolCalls[0].Arguments)
		if b.ID != "toolu_fixed" || b.Name != "get_time" {
			t.Errorf("second tool block = %+v", b)
		}
		jsonEqual(t, string(b.Input), rep.ToolCalls[1].Arguments)
		if msg.StopReason != anthropic.StopReasonToolUse {
			t.Errorf("stop reason = %q", msg.StopReason)
		}
		checkAnthropicUsage(t, msg.Usage, rep.Usage)
	}
	t.Run("non-stream", func(t *testing.T) {
		msg, err := c.Messages.New(testCtx(t), anthropicParams("m"))
		if err != nil {
			t.Fatal(err)
		}
		check(t, *msg)
	})
	t.Run("stream", func(t *testing.T) {
		msg, _, err := anthropicStream(t, c, anthropicParams("m"))
		if err != nil {
			t.Fatal(err)
		}
		check(t, msg)
	})
}

func TestAnthropicSDKErrors(t *testing.T) {
	_, base := start(t, Options{Keys: []string{"good-key"}})

	bad, good := anthropicClient(base, "bad-key"), anthropicClient(base, "good-key")
	_, err := bad.Messages.New(testCtx(t), anthropicParams("m"))
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || !strings.Contains(apiErr.RawJSON(), `"authentication_error"`) {
		t.Fatalf("err = %v, want a 401 authentication_error", err)
	}

	_, err = good.Messages.New(testCtx(t), anthropicParams("claude-mock-fail-429"))
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Response.Header.Get("retry-after") != "2" {
		t.Fatalf("err = %v, want a 429 with retry-after", err)
	}

	// A 200 stream that carries an error event surfaces as the SDK's error.
	_, _, err = anthropicStream(t, good, anthropicParams("claude-mock-soft-error"))
	if err == nil || !strings.Contains(err.Error(), "overloaded_error") {
		t.Fatalf("stream err = %v, want the overloaded_error event", err)
	}
}
