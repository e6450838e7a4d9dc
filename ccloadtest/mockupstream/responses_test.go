package mockupstream

import (
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

func responsesParams(model string) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model: model, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
	}
}

// streamed is what a client rebuilds from a Responses stream.
type streamed struct {
	text, reasoning map[string]string // by item id
	args            map[string]string // function call arguments by item id
	final           responses.Response
	terminal        string
	types           []string
}

// responsesStream runs a streaming request, checks the sequence numbers and
// rebuilds the output from the deltas.
func responsesStream(t *testing.T, c openai.Client, p responses.ResponseNewParams) (streamed, error) {
	t.Helper()
	stream := c.Responses.NewStreaming(testCtx(t), p)
	defer stream.Close()
	s := streamed{text: map[string]string{}, reasoning: map[string]string{}, args: map[string]string{}}
	for stream.Next() {
		ev := stream.Current()
		if ev.SequenceNumber != int64(len(s.types)) {
			t.Fatalf("event %d (%s) has sequence_number %d", len(s.types), ev.Type, ev.SequenceNumber)
		}
		s.types = append(s.types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			s.text[ev.ItemID] += ev.Delta
		case "response.output_text.done":
			if s.text[ev.ItemID] != ev.Text {
				t.Errorf("output_text.done %q != deltas %q", ev.Text, s.text[ev.ItemID])
			}
		case "response.reasoning_summary_text.delta":
			s.reasoning[ev.ItemID] += ev.Delta
		case "response.function_call_arguments.delta":
			s.args[ev.ItemID] += ev.Delta
		case "response.function_call_arguments.done":
			if s.args[ev.ItemID] != ev.Arguments {
				t.Errorf("arguments.done %q != deltas %q", ev.Arguments, s.args[ev.ItemID])
			}
		case "response.completed", "response.incomplete":
			s.final, s.terminal = ev.Response, ev.Type
		case "error":
			return s, errors.New(ev.Code + ": " + ev.Message)
		}
	}
	return s, stream.Err()
}

func checkResponsesUsage(t *testing.T, u responses.ResponseUsage, want Usage) {
	t.Helper()
	prompt := int64(want.Input + want.CacheRead + want.CacheWrite)
	if u.InputTokens != prompt || u.OutputTokens != int64(want.Output) || u.TotalTokens != prompt+int64(want.Output) ||
		u.InputTokensDetails.CachedTokens != int64(want.CacheRead) || u.InputTokensDetails.CacheWriteTokens != int64(want.CacheWrite) ||
		u.OutputTokensDetails.ReasoningTokens != int64(want.Reasoning) {
		t.Errorf("usage = %s, want %+v", u.RawJSON(), want)
	}
}

func TestResponsesSDKText(t *testing.T) {
	_, base := start(t, Options{})
	c := openaiClient(base, "sk-test")

	resp, err := c.Responses.New(testCtx(t), responsesParams("gpt-5-codex"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != DefaultText || resp.Status != "completed" || resp.Model != "gpt-5-codex" || resp.Object != "response" {
		t.Fatalf("response = %s", resp.RawJSON())
	}
	checkResponsesUsage(t, resp.Usage, DefaultUsage())

	s, err := responsesStream(t, c, responsesParams("gpt-5-codex"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"}
	if strings.Join(s.types[:4], " ") != strings.Join(want, " ") {
		t.Errorf("first events = %v", s.types[:4])
	}
	wantTail := []string{"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if strings.Join(s.types[len(s.types)-4:], " ") != strings.Join(wantTail, " ") {
		t.Errorf("last events = %v", s.types[len(s.types)-4:])
	}
	msg := s.final.Output[0].AsMessage()
	if len(s.text) != 1 || s.text[msg.ID] != DefaultText || s.final.OutputText() != DefaultText {
		t.Errorf("streamed text %q, final %q", s.text, s.final.OutputText())
	}
	checkResponsesUsage(t, s.final.Usage, DefaultUsage())
}

func TestResponsesSDKToolCallsAndReasoning(t *testing.T) {
	rep := Reply{
		Thinking: "I should run the tests.", ThinkingSignature: "gAAAAB-opaque",
		ToolCalls: []ToolCall{
			{Name: "exec_command", Arguments: `{"cmd":"go test ./..."}`},
			{ID: "call_fixed", Name: "exec", Arguments: "console.log(1)", Custom: true},
		},
		Usage: Usage{Input: 9, Output: 30, CacheRead: 1000, CacheWrite: 2, Reasoning: 12},
	}
	_, base := start(t, script(rep))
	c := openaiClient(base, "k")

	check := func(t *testing.T, r responses.Response) {
		if len(r.Output) != 3 {
			t.Fatalf("output = %s", r.RawJSON())
		}
		rs, fc, cc := r.Output[0].AsReasoning(), r.Output[1].AsFunctionCall(), r.Output[2]
		if rs.Type != "reasoning" || len(rs.Summary) != 1 || rs.Summary[0].Text != rep.Thinking || rs.EncryptedContent != rep.ThinkingSignature {
			t.Errorf("reasoning item = %s", r.Output[0].RawJSON())
		}
		if fc.Type != "function_call" || fc.Name != "exec_command" || fc.CallID == "" || fc.Arguments != rep.ToolCalls[0].Arguments {
			t.Errorf("function call = %s", r.Output[1].RawJSON())
		}
		if cc.Type != "custom_tool_call" || cc.Name != "exec" || cc.CallID != "call_fixed" || cc.Input != "console.log(1)" {
			t.Errorf("custom call = %s", r.Output[2].RawJSON())
		}
		checkResponsesUsage(t, r.Usage, rep.Usage)
	}
	t.Run("non-stream", func(t *testing.T) {
		resp, err := c.Responses.New(testCtx(t), responsesParams("m"))
		if err != nil {
			t.Fatal(err)
		}
		check(t, *resp)
	})
	t.Run("stream", func(t *testing.T) {
		s, err := responsesStream(t, c, responsesParams("m"))
		if err != nil {
			t.Fatal(err)
		}
		check(t, s.final)
		rsID, fcID := s.final.Output[0].ID, s.final.Output[1].ID
		if s.reasoning[rsID] != rep.Thinking || s.args[fcID] != rep.ToolCalls[0].Arguments {
			t.Errorf("deltas: reasoning %q args %q", s.reasoning[rsID], s.args[fcID])
		}
		for _, want := range []string{"response.reasoning_summary_part.added", "response.reasoning_summary_part.done",
			"response.function_call_arguments.done", "response.custom_tool_call_input.done"} {
			if !strings.Contains(strings.Join(s.types, " "), want) {
				t.Errorf("no %s event in %v", want, s.types)
			}
		}
	})
}

func TestResponsesSDKIncomplete(t *testing.T) {
	_, base := start(t, script(Reply{Text: "cut short", StopReason: "max_output_tokens"}))
	s, err := responsesStream(t, openaiClient(base, "k"), responsesParams("m"))
	if err != nil {
		t.Fatal(err)
	}
	if s.terminal != "response.incomplete" || s.final.Status != "incomplete" || s.final.IncompleteDetails.Reason != "max_output_tokens" {
		t.Errorf("terminal %s status %s details %s", s.terminal, s.final.Status, s.final.IncompleteDetails.RawJSON())
	}
}

func TestResponsesSDKErrors(t *testing.T) {
	_, base := start(t, Options{Keys: []string{"good"}})
	bad, good := openaiClient(base, "bad"), openaiClient(base, "good")
	var apiErr *openai.Error

	_, err := bad.Responses.New(testCtx(t), responsesParams("gpt-5"))
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 {
		t.Fatalf("err = %v, want 401", err)
	}
	_, err = good.Responses.New(testCtx(t), responsesParams("gpt-5-mock-fail-429"))
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Code != "rate_limit_exceeded" {
		t.Fatalf("err = %v, want 429 rate_limit_exceeded", err)
	}
	_, err = responsesStream(t, good, responsesParams("gpt-5-mock-soft-error"))
	if err == nil || !strings.Contains(err.Error(), "overloaded") {
		t.Fatalf("stream err = %v, want the error event", err)
	}
}
