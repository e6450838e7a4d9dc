package mockupstream

import "encoding/json"

// Anthropic Messages: https://docs.anthropic.com/en/api/messages and
// https://docs.anthropic.com/en/docs/build-with-claude/streaming.

type anthropicMessage struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []anthropicBlock `json:"content"`
	StopReason   *string          `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        anthropicUsage   `json:"usage"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`

	args string // tool_use: the arguments as scripted, streamed verbatim
}

type anthropicUsage struct {
	InputTokens              int                    `json:"input_tokens"`
	CacheCreationInputTokens int                    `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int                    `json:"cache_read_input_tokens"`
	CacheCreation            *anthropicCacheCreated `json:"cache_creation,omitempty"`
	OutputTokens             int                    `json:"output_tokens"`
	OutputTokensDetails      *anthropicOutputDetail `json:"output_tokens_details,omitempty"`
	ServiceTier              string                 `json:"service_tier,omitempty"`
}

type anthropicCacheCreated struct {
	Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
}

type anthropicOutputDetail struct {
	ThinkingTokens int `json:"thinking_tokens"`
}

type anthropicDelta struct {
	Type        string  `json:"type"`
	Text        *string `json:"text,omitempty"`
	Thinking    *string `json:"thinking,omitempty"`
	Signature   *string `json:"signature,omitempty"`
	PartialJSON *string `json:"partial_json,omitempty"`
}

type anthropicStop struct {
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

type anthropicEvent struct {
	Type         string            `json:"type"`
	Message      *anthropicMessage `json:"message,omitempty"`
	Index        *int              `json:"index,omitempty"`
	ContentBlock *anthropicBlock   `json:"content_block,omitempty"`
	Delta        any               `json:"delta,omitempty"`
	Usage        *anthropicUsage   `json:"usage,omitempty"`
}

func anthropicStopReason(rep *Reply) string {
	switch {
	case rep.StopReason != "":
		return rep.StopReason
	case len(rep.ToolCalls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

func newAnthropicUsage(u Usage, output int) anthropicUsage {
	au := anthropicUsage{
		InputTokens:              u.Input,
		CacheCreationInputTokens: u.CacheWrite,
		CacheReadInputTokens:     u.CacheRead,
		CacheCreation:            &anthropicCacheCreated{Ephemeral5m: u.CacheWrite},
		OutputTokens:             output,
		ServiceTier:              "standard",
	}
	if u.Reasoning > 0 && output == u.Output {
		au.OutputTokensDetails = &anthropicOutputDetail{ThinkingTokens: u.Reasoning}
	}
	return au
}

// anthropicBlocks returns the complete content blocks of rep, in order:
// thinking, text, tool uses.
func anthropicBlocks(t *turn, rep *Reply) []anthropicBlock {
	var out []anthropicBlock
	if rep.thinking() {
		out = append(out, anthropicBlock{Type: "thinking", Thinking: ptr(rep.Thinking), Signature: ptr(rep.ThinkingSignature)})
	}
	if rep.Text != "" {
		out = append(out, anthropicBlock{Type: "text", Text: ptr(rep.Text)})
	}
	for i, c := range rep.ToolCalls {
		out = append(out, anthropicBlock{Type: "tool_use", ID: t.callID("toolu_mock", c, i), Name: c.Name,
			Input: objectArgs(c.Arguments), args: c.Arguments})
	}
	return out
}

func anthropicBody(t *turn, rep *Reply) []byte {
	return jsonOf(anthropicMessage{
		ID: t.id("msg_mock"), Type: "message", Role: "assistant", Model: t.rec.Model,
		Content:    anthropicBlocks(t, rep),
		StopReason: ptr(anthropicStopReason(rep)),
		Usage:      newAnthropicUsage(rep.Usage, rep.Usage.Output),
	})
}

// anthropicEvents renders the stream: message_start, each block as
// content_block_start / deltas / content_block_stop (a ping after the first
// start, as the API sends it), message_delta, message_stop.
func anthropicEvents(t *turn, rep *Reply) [][]byte {
	var out [][]byte
	emit := func(ev anthropicEvent) { out = append(out, sseEvent(ev.Type, jsonOf(ev))) }

	emit(anthropicEvent{Type: "message_start", Message: &anthropicMessage{
		ID: t.id("msg_mock"), Type: "message", Role: "assistant", Model: t.rec.Model,
		Content: []anthropicBlock{}, Usage: newAnthropicUsage(rep.Usage, 1),
	}})
	for i, b := range anthropicBlocks(t, rep) {
		idx := i
		start := b
		var deltas []anthropicDelta
		switch b.Type {
		case "thinking":
			start.Thinking, start.Signature = ptr(""), ptr("")
			for _, p := range textPieces(rep.Thinking) {
				deltas = append(deltas, anthropicDelta{Type: "thinking_delta", Thinking: ptr(p)})
			}
			if rep.ThinkingSignature != "" {
				deltas = append(deltas, anthropicDelta{Type: "signature_delta", Signature: ptr(rep.ThinkingSignature)})
			}
		case "text":
			start.Text = ptr("")
			for _, p := range textPieces(rep.Text) {
				deltas = append(deltas, anthropicDelta{Type: "text_delta", Text: ptr(p)})
			}
		case "tool_use":
			start.Input = json.RawMessage("{}")
			deltas = append(deltas, anthropicDelta{Type: "input_json_delta", PartialJSON: ptr("")})
			for _, p := range argPieces(b.args) {
				deltas = append(deltas, anthropicDelta{Type: "input_json_delta", PartialJSON: ptr(p)})
			}
		}
		emit(anthropicEvent{Type: "content_block_start", Index: &idx, ContentBlock: &start})
		if i == 0 {
			emit(anthropicEvent{Type: "ping"})
		}
		for _, d := range deltas {
			emit(anthropicEvent{Type: "content_block_delta", Index: &idx, Delta: d})
		}
		emit(anthropicEvent{Type: "content_block_stop", Index: &idx})
	}
	u := newAnthropicUsage(rep.Usage, rep.Usage.Output)
	u.CacheCreation, u.ServiceTier = nil, ""
	emit(anthropicEvent{Type: "message_delta", Delta: anthropicStop{StopReason: ptr(anthropicStopReason(rep))}, Usage: &u})
	emit(anthropicEvent{Type: "message_stop"})
	return out
}

func ptr[T any](v T) *T { return &v }
