package mockupstream

import (
	"encoding/json"

	"github.com/tidwall/gjson"
)

// OpenAI Responses: https://platform.openai.com/docs/api-reference/responses
// and its streaming events (every event carries type and sequence_number).

type respObject struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Background         bool              `json:"background"`
	CompletedAt        *int64            `json:"completed_at"`
	Error              *struct{}         `json:"error"`
	IncompleteDetails  *respIncomplete   `json:"incomplete_details"`
	Instructions       json.RawMessage   `json:"instructions"`
	MaxOutputTokens    json.RawMessage   `json:"max_output_tokens"`
	Model              string            `json:"model"`
	Output             []any             `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID json.RawMessage   `json:"previous_response_id"`
	Reasoning          json.RawMessage   `json:"reasoning"`
	Store              bool              `json:"store"`
	Temperature        float64           `json:"temperature"`
	Text               json.RawMessage   `json:"text"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Tools              json.RawMessage   `json:"tools"`
	TopP               float64           `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *respUsage        `json:"usage"`
	User               *string           `json:"user"`
	Metadata           map[string]string `json:"metadata"`
}

type respIncomplete struct {
	Reason string `json:"reason"`
}

type respUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

type respMessageItem struct {
	ID      string     `json:"id"`
	Type    string     `json:"type"`
	Status  string     `json:"status"`
	Content []respText `json:"content"`
	Role    string     `json:"role"`
}

type respText struct {
	Type        string     `json:"type"`
	Annotations []struct{} `json:"annotations"`
	Logprobs    []struct{} `json:"logprobs"`
	Text        string     `json:"text"`
}

type respReasoningItem struct {
	ID               string        `json:"id"`
	Type             string        `json:"type"`
	Summary          []respSummary `json:"summary"`
	EncryptedContent string        `json:"encrypted_content,omitempty"`
}

type respSummary struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type respFunctionCall struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

type respCustomCall struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Input     string `json:"input"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

type respEvent struct {
	Type           string      `json:"type"`
	SequenceNumber int         `json:"sequence_number"`
	Response       *respObject `json:"response,omitempty"`
	OutputIndex    *int        `json:"output_index,omitempty"`
	Item           any         `json:"item,omitempty"`
	ItemID         string      `json:"item_id,omitempty"`
	ContentIndex   *int        `json:"content_index,omitempty"`
	SummaryIndex   *int        `json:"summary_index,omitempty"`
	Part           any         `json:"part,omitempty"`
	Delta          *string     `json:"delta,omitempty"`
	Text           *string     `json:"text,omitempty"`
	Arguments      *string     `json:"arguments,omitempty"`
	Input          *string     `json:"input,omitempty"`
	Logprobs       *[]struct{} `json:"logprobs,omitempty"`
}

// respShell returns the response object with the request's settings echoed,
// as the API does, and no output yet.
func respShell(t *turn) *respObject {
	body := t.rec.Body
	echo := func(path, def string) json.RawMessage {
		if v := gjson.GetBytes(body, path); v.Exists() {
			return json.RawMessage(v.Raw)
		}
		return json.RawMessage(def)
	}
	store := gjson.GetBytes(body, "store")
	parallel := gjson.GetBytes(body, "parallel_tool_calls")
	return &respObject{
		ID: t.id("resp_mock"), Object: "response", CreatedAt: t.created.Unix(), Status: "in_progress",
		Instructions: echo("instructions", "null"), MaxOutputTokens: echo("max_output_tokens", "null"),
		Model: t.rec.Model, Output: []any{}, ParallelToolCalls: !parallel.Exists() || parallel.Bool(),
		PreviousResponseID: echo("previous_response_id", "null"),
		Reasoning:          echo("reasoning", `{"effort":null,"summary":null}`),
		Store:              !store.Exists() || store.Bool(), Temperature: 1,
		Text:       echo("text", `{"format":{"type":"text"}}`),
		ToolChoice: echo("tool_choice", `"auto"`), Tools: echo("tools", "[]"),
		TopP: 1, Truncation: "disabled", Metadata: map[string]string{},
	}
}

func newRespUsage(u Usage) *respUsage {
	ru := &respUsage{InputTokens: u.prompt(), OutputTokens: u.Output, TotalTokens: u.prompt() + u.Output}
	ru.InputTokensDetails.CachedTokens = u.CacheRead
	ru.InputTokensDetails.CacheWriteTokens = u.CacheWrite
	ru.OutputTokensDetails.ReasoningTokens = u.Reasoning
	return ru
}

// finish marks the response completed, or incomplete when the scripted
// stop reason is one of the API's incomplete reasons, and returns the name
// of its terminal event.
func (o *respObject) finish(t *turn, rep *Reply, output []any) string {
	o.Output, o.Usage = output, newRespUsage(rep.Usage)
	switch rep.StopReason {
	case "max_output_tokens", "content_filter":
		o.Status, o.IncompleteDetails = "incomplete", &respIncomplete{Reason: rep.StopReason}
		return "response.incomplete"
	}
	o.Status, o.CompletedAt = "completed", ptr(t.created.Unix())
	return "response.completed"
}

// respItems returns the finished output items: reasoning, message, calls.
func respItems(t *turn, rep *Reply) []any {
	var out []any
	if rep.thinking() {
		it := respReasoningItem{ID: t.id("rs_mock"), Type: "reasoning", Summary: []respSummary{}, EncryptedContent: rep.ThinkingSignature}
		if rep.Thinking != "" {
			it.Summary = []respSummary{{Type: "summary_text", Text: rep.Thinking}}
		}
		out = append(out, it)
	}
	if rep.Text != "" {
		out = append(out, respMessageItem{ID: t.id("msg_mock"), Type: "message", Status: "completed",
			Content: []respText{newRespText(rep.Text)}, Role: "assistant"})
	}
	for i, c := range rep.ToolCalls {
		if c.Custom {
			out = append(out, respCustomCall{ID: t.callID("ctc_mock", ToolCall{}, i), Type: "custom_tool_call",
				CallID: t.callID("call_mock", c, i), Input: c.Arguments, Name: c.Name, Namespace: c.Namespace})
			continue
		}
		out = append(out, respFunctionCall{ID: t.callID("fc_mock", ToolCall{}, i), Type: "function_call", Status: "completed",
			Arguments: c.Arguments, CallID: t.callID("call_mock", c, i), Name: c.Name, Namespace: c.Namespace})
	}
	return out
}

func newRespText(s string) respText {
	return respText{Type: "output_text", Annotations: []struct{}{}, Logprobs: []struct{}{}, Text: s}
}

func responsesBody(t *turn, rep *Reply) []byte {
	o := respShell(t)
	o.finish(t, rep, respItems(t, rep))
	return jsonOf(o)
}

// responsesEvents renders the stream: response.created, response.in_progress,
// then per output item output_item.added, its parts and deltas, and
// output_item.done, then response.completed with the whole response.
func responsesEvents(t *turn, rep *Reply) [][]byte {
	var out [][]byte
	seq := 0
	emit := func(ev respEvent) {
		ev.SequenceNumber = seq
		seq++
		out = append(out, sseEvent(ev.Type, jsonOf(ev)))
	}
	noLogprobs := &[]struct{}{}
	zero := ptr(0)

	o := respShell(t)
	emit(respEvent{Type: "response.created", Response: o})
	emit(respEvent{Type: "response.in_progress", Response: o})
	items := respItems(t, rep)
	for i, item := range items {
		oi := ptr(i)
		switch it := item.(type) {
		case respReasoningItem:
			added := it
			added.Summary = []respSummary{}
			emit(respEvent{Type: "response.output_item.added", OutputIndex: oi, Item: added})
			if rep.Thinking != "" {
				part := respSummary{Type: "summary_text"}
				emit(respEvent{Type: "response.reasoning_summary_part.added", ItemID: it.ID, OutputIndex: oi, SummaryIndex: zero, Part: part})
				for _, p := range textPieces(rep.Thinking) {
					emit(respEvent{Type: "response.reasoning_summary_text.delta", ItemID: it.ID, OutputIndex: oi, SummaryIndex: zero, Delta: ptr(p)})
				}
				emit(respEvent{Type: "response.reasoning_summary_text.done", ItemID: it.ID, OutputIndex: oi, SummaryIndex: zero, Text: ptr(rep.Thinking)})
				part.Text = rep.Thinking
				emit(respEvent{Type: "response.reasoning_summary_part.done", ItemID: it.ID, OutputIndex: oi, SummaryIndex: zero, Part: part})
			}
		case respMessageItem:
			added := it
			added.Status, added.Content = "in_progress", []respText{}
			emit(respEvent{Type: "response.output_item.added", OutputIndex: oi, Item: added})
			emit(respEvent{Type: "response.content_part.added", ItemID: it.ID, OutputIndex: oi, ContentIndex: zero, Part: newRespText("")})
			for _, p := range textPieces(rep.Text) {
				emit(respEvent{Type: "response.output_text.delta", ItemID: it.ID, OutputIndex: oi, ContentIndex: zero, Delta: ptr(p), Logprobs: noLogprobs})
			}
			emit(respEvent{Type: "response.output_text.done", ItemID: it.ID, OutputIndex: oi, ContentIndex: zero, Text: ptr(rep.Text), Logprobs: noLogprobs})
			emit(respEvent{Type: "response.content_part.done", ItemID: it.ID, OutputIndex: oi, ContentIndex: zero, Part: it.Content[0]})
		case respFunctionCall:
			added := it
			added.Status, added.Arguments = "in_progress", ""
			emit(respEvent{Type: "response.output_item.added", OutputIndex: oi, Item: added})
			for _, p := range argPieces(it.Arguments) {
				emit(respEvent{Type: "response.function_call_arguments.delta", ItemID: it.ID, OutputIndex: oi, Delta: ptr(p)})
			}
			emit(respEvent{Type: "response.function_call_arguments.done", ItemID: it.ID, OutputIndex: oi, Arguments: ptr(it.Arguments)})
		case respCustomCall:
			added := it
			added.Input = ""
			emit(respEvent{Type: "response.output_item.added", OutputIndex: oi, Item: added})
			for _, p := range argPieces(it.Input) {
				emit(respEvent{Type: "response.custom_tool_call_input.delta", ItemID: it.ID, OutputIndex: oi, Delta: ptr(p)})
			}
			emit(respEvent{Type: "response.custom_tool_call_input.done", ItemID: it.ID, OutputIndex: oi, Input: ptr(it.Input)})
		}
		emit(respEvent{Type: "response.output_item.done", OutputIndex: oi, Item: item})
	}
	done := respShell(t)
	name := done.finish(t, rep, items)
	emit(respEvent{Type: name, Response: done})
	return out
}
