package convert

// stopKind is the canonical reason a response ended. The mapping to and
// from each family is the stop-reason table in doc.go.
type stopKind uint8

const (
	stopNone      stopKind = iota // not said (yet)
	stopEnd                       // natural end of turn
	stopSeq                       // a stop sequence matched
	stopMaxTokens                 // the output token limit
	stopContext                   // the context window is full
	stopToolUse                   // the model called tools
	stopRefusal                   // refusal, content filter, safety block
	stopPause                     // Anthropic pause_turn (a server tool loop paused)
)

func stopFromAnthropic(s string) stopKind {
	switch s {
	case "end_turn":
		return stopEnd
	case "stop_sequence":
		return stopSeq
	case "max_tokens":
		return stopMaxTokens
	case "model_context_window_exceeded":
		return stopContext
	case "tool_use":
		return stopToolUse
	case "refusal":
		return stopRefusal
	case "pause_turn":
		return stopPause
	}
	return stopNone
}

func (s stopKind) anthropic() string {
	switch s {
	case stopSeq:
		return "stop_sequence"
	case stopMaxTokens:
		return "max_tokens"
	case stopContext:
		return "model_context_window_exceeded"
	case stopToolUse:
		return "tool_use"
	case stopRefusal:
		return "refusal"
	case stopPause:
		return "pause_turn"
	}
	return "end_turn"
}

func stopFromChat(s string) stopKind {
	switch s {
	case "stop":
		return stopEnd
	case "length":
		return stopMaxTokens
	case "tool_calls", "function_call":
		return stopToolUse
	case "content_filter":
		return stopRefusal
	}
	return stopNone
}

func (s stopKind) chat() string {
	switch s {
	case stopMaxTokens, stopContext:
		return "length"
	case stopToolUse:
		return "tool_calls"
	case stopRefusal:
		return "content_filter"
	}
	return "stop"
}

// stopFromResponses reads a response's status and incomplete_details.reason.
// A completed response that made function calls is turned into tool_use by
// the pipe (and by the response decoder), not here.
func stopFromResponses(status, reason string) stopKind {
	switch status {
	case "completed":
		return stopEnd
	case "incomplete":
		if reason == "content_filter" {
			return stopRefusal
		}
		return stopMaxTokens
	}
	return stopNone
}

// responses returns the response status and, for "incomplete", the reason.
func (s stopKind) responses() (status, reason string) {
	switch s {
	case stopMaxTokens, stopContext:
		return "incomplete", "max_output_tokens"
	case stopRefusal:
		return "incomplete", "content_filter"
	}
	return "completed", ""
}

func stopFromGemini(s string) stopKind {
	switch s {
	case "":
		return stopNone
	case "STOP":
		return stopEnd
	case "MAX_TOKENS":
		return stopMaxTokens
	case "SAFETY", "RECITATION", "LANGUAGE", "BLOCKLIST", "PROHIBITED_CONTENT",
		"SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return stopRefusal
	}
	// OTHER, MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, ...: the model
	// stopped without a reason the other families can name.
	return stopEnd
}

func (s stopKind) gemini() string {
	switch s {
	case stopMaxTokens, stopContext:
		return "MAX_TOKENS"
	case stopRefusal:
		return "SAFETY"
	}
	return "STOP"
}
