package protocol

import (
	"net/http"
	"strconv"
)

// ErrorBody renders msg as family's JSON error body for an HTTP status, so
// every client sees errors in the shape its SDK parses.
func ErrorBody(f Family, status int, msg string) []byte {
	b := make([]byte, 0, 96+len(msg))
	switch f {
	case Anthropic:
		b = append(b, `{"type":"error","error":{"type":`...)
		b = strconv.AppendQuote(b, anthropicErrorType(status))
		b = append(b, `,"message":`...)
		b = AppendJSONString(b, msg)
		b = append(b, `}}`...)
	case Gemini:
		b = append(b, `{"error":{"code":`...)
		b = strconv.AppendInt(b, int64(status), 10)
		b = append(b, `,"message":`...)
		b = AppendJSONString(b, msg)
		b = append(b, `,"status":`...)
		b = strconv.AppendQuote(b, geminiStatus(status))
		b = append(b, `}}`...)
	default: // OpenAI Chat and Responses share the error object
		typ, code := openAIErrorType(status)
		b = append(b, `{"error":{"message":`...)
		b = AppendJSONString(b, msg)
		b = append(b, `,"type":`...)
		b = strconv.AppendQuote(b, typ)
		b = append(b, `,"param":null,"code":`...)
		if code == "" {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendQuote(b, code)
		}
		b = append(b, `}}`...)
	}
	return b
}

// ErrorEvent renders msg as the family's in-stream error event, used when a
// stream fails after bytes already reached the client (no retry possible).
func ErrorEvent(f Family, status int, msg string) []byte {
	switch f {
	case Anthropic:
		return AppendEvent(nil, "error", ErrorBody(f, status, msg))
	case Responses:
		typ, code := openAIErrorType(status)
		if code == "" {
			code = typ
		}
		d := []byte(`{"type":"error","code":`)
		d = strconv.AppendQuote(d, code)
		d = append(d, `,"message":`...)
		d = AppendJSONString(d, msg)
		d = append(d, `,"param":null}`...)
		return AppendEvent(nil, "error", d)
	default:
		return AppendEvent(nil, "", ErrorBody(f, status, msg))
	}
}

func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 503, 529:
		return "overloaded_error"
	case 504:
		return "timeout_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

func openAIErrorType(status int) (typ, code string) {
	switch status {
	case 401:
		return "invalid_request_error", "invalid_api_key"
	case 403:
		return "permission_error", ""
	case 404:
		return "invalid_request_error", "model_not_found"
	case 429:
		return "rate_limit_error", "rate_limit_exceeded"
	}
	if status >= 500 {
		return "server_error", ""
	}
	return "invalid_request_error", ""
}

func geminiStatus(status int) string {
	switch status {
	case 400, 413:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503, 529:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return http.StatusText(status)
}
