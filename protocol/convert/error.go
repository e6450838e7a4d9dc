package convert

import (
	"bytes"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/jsonwalk"
)

// maxErrorMessage bounds an upstream message carried to the client: a
// garbage body (an HTML error page) must not be echoed whole.
const maxErrorMessage = 1024

// ConvertError turns an upstream error body (any family's shape, or garbage)
// into the client family's error body, keeping the status and the upstream
// message. A body without a recognisable message gives the status text plus
// the start of the body.
func ConvertError(from, to protocol.Family, status int, body []byte) []byte {
	return protocol.ErrorBody(to, status, errorMessage(body, status))
}

// errorMessage finds the message of an error body in any family's shape:
// {"error":{"message"}} (Anthropic, OpenAI, Gemini), {"message"} (Responses
// error events, many proxies), {"error":"text"}, {"detail"}; a Gemini error
// may come wrapped in a one-element array. Otherwise the body's text.
func errorMessage(body []byte, status int) string {
	body = bytes.TrimSpace(body)
	if jsonwalk.Valid(jsonwalk.View(body)) {
		r := gjson.ParseBytes(body)
		if r.IsArray() {
			r = r.Get("0")
		}
		for _, path := range [...]string{"error.message", "message", "error", "detail", "msg"} {
			if v := r.Get(path); v.Type == gjson.String && v.Str != "" {
				return clipMessage(v.Str)
			}
		}
	}
	text := http.StatusText(status)
	if text == "" {
		text = "upstream error"
	}
	if len(body) == 0 {
		return text
	}
	return clipMessage(text + ": " + strings.ToValidUTF8(string(body[:min(len(body), maxErrorMessage)]), "\uFFFD"))
}

func clipMessage(s string) string {
	if len(s) <= maxErrorMessage {
		return s
	}
	cut := maxErrorMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// streamErrorOf reads an in-stream error payload of any family's shape into
// a status and a message. status is the fallback when nothing says better.
func streamErrorOf(r gjson.Result, status int) (int, string) {
	e := r.Get("error")
	if !e.IsObject() {
		e = r // Responses "error" events and response.failed carry code/message at top level
	}
	msg := e.Get("message").Str
	if msg == "" {
		msg = "upstream error"
	}
	if c := e.Get("code"); c.Type == gjson.Number && c.Int() >= 400 && c.Int() <= 599 {
		return int(c.Int()), clipMessage(msg) // Gemini
	}
	for _, path := range [...]string{"type", "code", "status"} {
		if s := statusOfErrorType(e.Get(path).Str); s != 0 {
			return s, clipMessage(msg)
		}
	}
	return status, clipMessage(msg)
}

// statusOfErrorType maps the error types and codes of the four families to
// an HTTP status, so a mid-stream error keeps its meaning (a 429 stays a
// 429) in the client's shape.
func statusOfErrorType(t string) int {
	switch t {
	case "":
		return 0
	case "invalid_request_error", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "context_length_exceeded", "invalid_prompt":
		return 400
	case "authentication_error", "invalid_api_key", "UNAUTHENTICATED":
		return 401
	case "billing_error":
		return 402
	case "permission_error", "PERMISSION_DENIED":
		return 403
	case "not_found_error", "model_not_found", "NOT_FOUND":
		return 404
	case "request_too_large":
		return 413
	case "rate_limit_error", "rate_limit_exceeded", "insufficient_quota", "RESOURCE_EXHAUSTED":
		return 429
	case "api_error", "server_error", "INTERNAL":
		return 500
	case "overloaded_error":
		return 529
	case "UNAVAILABLE", "server_is_overloaded", "service_unavailable":
		return 503
	case "timeout_error", "DEADLINE_EXCEEDED":
		return 504
	}
	return 0
}
