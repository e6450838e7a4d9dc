package mockupstream

import "encoding/json"

// OpenAI Chat Completions: https://platform.openai.com/docs/api-reference/chat
// (the chat.completion object and the chat.completion.chunk stream).

type chatCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	Choices           []chatChoice `json:"choices"`
	Usage             *chatUsage   `json:"usage"`
	ServiceTier       string       `json:"service_tier"`
	SystemFingerprint *string      `json:"system_fingerprint"`
}

type chatChoice struct {
	Index        int          `json:"index"`
	Message      *chatMessage `json:"message,omitempty"`
	Delta        *chatDelta   `json:"delta,omitempty"`
	Logprobs     *struct{}    `json:"logprobs"`
	FinishReason *string      `json:"finish_reason"`
}

type chatMessage struct {
	Role             string         `json:"role"`
	Content          *string        `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
	Refusal          *string        `json:"refusal"`
	Annotations      []struct{}     `json:"annotations"`
}

type chatToolCall struct {
	Index    *int         `json:"index,omitempty"` // stream deltas only
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type chatDelta struct {
	Role             string          `json:"role,omitempty"`
	Content          json.RawMessage `json:"content,omitempty"` // "" or null in the first chunk
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall  `json:"tool_calls,omitempty"`
}

type chatChunk struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	ServiceTier       string          `json:"service_tier"`
	SystemFingerprint *string         `json:"system_fingerprint"`
	Choices           []chatChoice    `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"` // null on every chunk but the last when usage was asked for
}

type chatUsage struct {
	PromptTokens            int                `json:"prompt_tokens"`
	CompletionTokens        int                `json:"completion_tokens"`
	TotalTokens             int                `json:"total_tokens"`
	PromptTokensDetails     chatPromptDetails  `json:"prompt_tokens_details"`
	CompletionTokensDetails chatCompletionInfo `json:"completion_tokens_details"`
}

type chatPromptDetails struct {
	CachedTokens     int `json:"cached_tokens"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	AudioTokens      int `json:"audio_tokens"`
}

type chatCompletionInfo struct {
	ReasoningTokens          int `json:"reasoning_tokens"`
	AudioTokens              int `json:"audio_tokens"`
	AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
	RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
}

func newChatUsage(u Usage) *chatUsage {
	return &chatUsage{
		PromptTokens:            u.prompt(),
		CompletionTokens:        u.Output,
		TotalTokens:             u.prompt() + u.Output,
		PromptTokensDetails:     chatPromptDetails{CachedTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite},
		CompletionTokensDetails: chatCompletionInfo{ReasoningTokens: u.Reasoning},
	}
}

func chatFinishReason(rep *Reply) string {
	switch {
	case rep.StopReason != "":
		return rep.StopReason
	case len(rep.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func chatBody(t *turn, rep *Reply) []byte {
	msg := &chatMessage{Role: "assistant", ReasoningContent: rep.Thinking, Annotations: []struct{}{}}
	if rep.Text != "" {
		msg.Content = ptr(rep.Text)
	}
	for i, c := range rep.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, chatToolCall{ID: t.callID("call_mock", c, i), Type: "function",
			Function: chatFunction{Name: c.Name, Arguments: c.Arguments}})
	}
	return jsonOf(chatCompletion{
		ID: t.id("chatcmpl-mock"), Object: "chat.completion", Created: t.created.Unix(), Model: t.rec.Model,
		Choices:     []chatChoice{{Message: msg, FinishReason: ptr(chatFinishReason(rep))}},
		Usage:       newChatUsage(rep.Usage),
		ServiceTier: "default",
	})
}

// chatEvents renders the stream: a role chunk, reasoning_content and content
// deltas, per tool call a chunk with id and name then argument fragments, a
// chunk with finish_reason, the usage chunk (empty choices) when
// stream_options.include_usage is set, and "[DONE]".
func chatEvents(t *turn, rep *Reply) [][]byte {
	var out [][]byte
	usage := json.RawMessage(nil)
	if t.includeUsage {
		usage = json.RawMessage("null")
	}
	emit := func(d chatDelta, finish *string) {
		out = append(out, sseEvent("", jsonOf(chatChunk{
			ID: t.id("chatcmpl-mock"), Object: "chat.completion.chunk", Created: t.created.Unix(), Model: t.rec.Model,
			ServiceTier: "default", Choices: []chatChoice{{Delta: &d, FinishReason: finish}}, Usage: usage,
		})))
	}

	first := chatDelta{Role: "assistant", Content: json.RawMessage("null")}
	if rep.Text != "" {
		first.Content = json.RawMessage(`""`)
	}
	emit(first, nil)
	for _, p := range textPieces(rep.Thinking) {
		emit(chatDelta{ReasoningContent: ptr(p)}, nil)
	}
	for _, p := range textPieces(rep.Text) {
		emit(chatDelta{Content: jsonOf(p)}, nil)
	}
	for i, c := range rep.ToolCalls {
		idx := i
		emit(chatDelta{ToolCalls: []chatToolCall{{Index: &idx, ID: t.callID("call_mock", c, i), Type: "function",
			Function: chatFunction{Name: c.Name}}}}, nil)
		for _, p := range argPieces(c.Arguments) {
			emit(chatDelta{ToolCalls: []chatToolCall{{Index: &idx, Function: chatFunction{Arguments: p}}}}, nil)
		}
	}
	emit(chatDelta{}, ptr(chatFinishReason(rep)))
	if t.includeUsage {
		out = append(out, sseEvent("", jsonOf(chatChunk{
			ID: t.id("chatcmpl-mock"), Object: "chat.completion.chunk", Created: t.created.Unix(), Model: t.rec.Model,
			ServiceTier: "default", Choices: []chatChoice{}, Usage: jsonOf(newChatUsage(rep.Usage)),
		})))
	}
	return append(out, sseEvent("", []byte("[DONE]")))
}
