package mockupstream

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// DefaultText is the assistant text of a reply that sets neither Text nor
// ToolCalls.
const DefaultText = "Hello from the ccload mock upstream."

// DefaultUsage is the usage of a reply whose Usage is zero: every field is
// non-zero so that each converter's usage mapping is exercised.
func DefaultUsage() Usage {
	return Usage{Input: 21, Output: 13, CacheRead: 8, CacheWrite: 4, Reasoning: 5}
}

// Reply is what the mock answers to one request. The zero Reply is a 200
// with DefaultText and DefaultUsage, streamed when the request asked for a
// stream.
type Reply struct {
	// Status is the HTTP status; 0 means 200. A status of 400 or more without
	// Raw or RawEvents is answered with the family's error JSON, with Text
	// (or a generic sentence) as the message.
	Status int
	// Header is set on the response after the mock's own headers.
	Header map[string]string

	// Raw, when set, is written as the whole body, as-is (Content-Type
	// application/json unless Header sets one): scripted error bodies, soft
	// errors, garbage. Raw wins over everything below.
	Raw []byte
	// RawEvents, when set, are written one by one as SSE event blocks (with
	// EventDelay and CutAfterEvents), whether or not the request streams:
	// for in-stream error events and malformed streams. Each block is
	// written verbatim, followed by a blank line unless it ends in one.
	RawEvents []string

	// Text is the assistant text. Empty means DefaultText unless ToolCalls
	// is set, in which case the reply has no text part.
	Text string
	// Thinking and ThinkingSignature make a reasoning block before the text,
	// in the family's shape (see the package comment). Either may be empty.
	Thinking, ThinkingSignature string
	// ToolCalls are emitted after the text; more than one is a parallel call.
	ToolCalls []ToolCall
	// Usage is reported in the family's shape; zero means DefaultUsage().
	Usage Usage
	// StopReason is the family-native stop value ("max_tokens", "length",
	// "MAX_TOKENS"; "max_output_tokens" or "content_filter" make a Responses
	// reply incomplete). Empty means the natural end, or the family's tool
	// use value when there are ToolCalls.
	StopReason string

	// FirstByteDelay is waited before the status line; EventDelay between
	// two stream events. Both end early when the client goes away.
	FirstByteDelay, EventDelay time.Duration
	// CutAfterEvents > 0 closes the connection abruptly after that many
	// stream events (a non-stream body is cut in half instead); a negative
	// value (-1) resets it before any byte of the response; 0 never cuts.
	CutAfterEvents int
}

// ToolCall is one function call of a Reply.
type ToolCall struct {
	// ID is the call id; empty means a generated one in the family's style
	// (Gemini then sends no id, as the Gemini API does).
	ID string
	// Name is the function name.
	Name string
	// Namespace, on a Responses reply, is the namespace the called tool is
	// nested in (Codex's namespace tools); it is sent as the call item's
	// "namespace" field. Other families ignore it.
	Namespace string
	// Arguments is the JSON object of arguments as a string. Families that
	// carry a string (Chat, Responses, Anthropic deltas) send it verbatim;
	// where an object is needed, invalid JSON becomes {}. Empty means {}.
	Arguments string
	// Custom makes a Responses reply use a custom_tool_call item whose input
	// is Arguments as plain text (Codex freeform tools); other families
	// ignore it.
	Custom bool
}

// Usage is the token usage of a Reply, counted as Anthropic counts it:
// Input excludes CacheRead and CacheWrite; Output includes Reasoning.
type Usage struct {
	Input, Output, CacheRead, CacheWrite, Reasoning int
}

// prompt is the total input as OpenAI and Gemini count it.
func (u Usage) prompt() int { return u.Input + u.CacheRead + u.CacheWrite }

// thinking reports whether the reply has a reasoning block.
func (r *Reply) thinking() bool { return r.Thinking != "" || r.ThinkingSignature != "" }

// normalized returns r with its defaults filled in. It does not touch the
// error and raw fields.
func (r Reply) normalized() Reply {
	if r.Text == "" && len(r.ToolCalls) == 0 {
		r.Text = DefaultText
	}
	if r.Usage == (Usage{}) {
		r.Usage = DefaultUsage()
	}
	calls := make([]ToolCall, len(r.ToolCalls))
	for i, c := range r.ToolCalls {
		if strings.TrimSpace(c.Arguments) == "" {
			c.Arguments = "{}"
		}
		calls[i] = c
	}
	r.ToolCalls = calls
	return r
}

// objectArgs returns a call's arguments as a JSON object for the families
// that embed an object rather than a string.
func objectArgs(args string) json.RawMessage {
	if json.Valid([]byte(args)) && strings.HasPrefix(strings.TrimSpace(args), "{") {
		return json.RawMessage(args)
	}
	return json.RawMessage("{}")
}

// geminiSignature returns sig as Gemini's base64 thoughtSignature bytes.
func geminiSignature(sig string) string {
	if sig == "" {
		return ""
	}
	if _, err := base64.StdEncoding.DecodeString(sig); err == nil {
		return sig
	}
	return base64.StdEncoding.EncodeToString([]byte(sig))
}

// errorMessage is the message of a scripted error reply.
func (r *Reply) errorMessage(status int) string {
	if r.Text != "" {
		return r.Text
	}
	return fmt.Sprintf("mock upstream: scripted %d %s", status, statusText(status))
}

// textPieces splits s into stream deltas of about one word each, the way a
// model streams tokens: every piece but the first starts at a space.
func textPieces(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i] == ' ' && s[i-1] != ' ' {
			out = append(out, s[start:i])
			start = i
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// argPieces splits a JSON argument string into three fragments (fewer when
// short), never inside a UTF-8 sequence, as models stream partial JSON.
func argPieces(s string) []string {
	const parts = 3
	if len(s) < parts*2 {
		return []string{s}
	}
	var out []string
	start := 0
	for k := 1; k < parts; k++ {
		cut := len(s) * k / parts
		for cut < len(s) && cut > start && !isRuneStart(s[cut]) {
			cut++
		}
		if cut > start && cut < len(s) {
			out = append(out, s[start:cut])
			start = cut
		}
	}
	return append(out, s[start:])
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
