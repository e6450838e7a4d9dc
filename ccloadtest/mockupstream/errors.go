package mockupstream

import "net/http"

// errorBody renders msg as the family's JSON error body for status, the
// shape each official SDK turns into its API error type.
func errorBody(family string, status int, msg string) []byte {
	switch family {
	case Anthropic:
		return jsonOf(struct {
			Type  string       `json:"type"`
			Error anthropicErr `json:"error"`
		}{"error", anthropicErr{anthropicErrorType(status), msg}})
	case Gemini:
		return jsonOf(struct {
			Error geminiErr `json:"error"`
		}{geminiErr{status, msg, geminiStatus(status)}})
	}
	return jsonOf(struct {
		Error openAIErr `json:"error"`
	}{newOpenAIErr(status, msg)})
}

// errorEvent renders msg as the family's in-stream error event: what a real
// upstream sends when a stream that already answered 200 fails.
func errorEvent(family string, status int, msg string) []byte {
	switch family {
	case Anthropic:
		return sseEvent("error", errorBody(family, status, msg))
	case Responses:
		e := newOpenAIErr(status, msg)
		code := e.Type
		if e.Code != nil {
			code = *e.Code
		}
		return sseEvent("error", jsonOf(struct {
			Type           string  `json:"type"`
			SequenceNumber int     `json:"sequence_number"`
			Code           string  `json:"code"`
			Message        string  `json:"message"`
			Param          *string `json:"param"`
		}{"error", 0, code, msg, nil}))
	case Gemini:
		return geminiEvent(errorBody(family, status, msg))
	}
	// Chat Completions streams carry the plain error object as data.
	return sseEvent("", errorBody(family, status, msg))
}

type anthropicErr struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// anthropicErrorType maps a status to Anthropic's error type
// (https://docs.anthropic.com/en/api/errors).
func anthropicErrorType(status int) string {
	switch status {
	case 400, 422:
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
	case 504:
		return "timeout_error"
	case 529, 503:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

type openAIErr struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// newOpenAIErr builds OpenAI's error object for a status, with the type and
// code the real API uses for it.
func newOpenAIErr(status int, msg string) openAIErr {
	typ, code := "invalid_request_error", ""
	switch {
	case status == 401:
		code = "invalid_api_key"
	case status == 403:
		code = "unsupported_country_region_territory"
	case status == 404:
		code = "model_not_found"
	case status == 429:
		typ, code = "requests", "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	e := openAIErr{Message: msg, Type: typ}
	if code != "" {
		e.Code = &code
	}
	return e
}

type geminiErr struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

// geminiStatus maps an HTTP status to the google.rpc status name Gemini puts
// in its errors.
func geminiStatus(status int) string {
	switch status {
	case 400, 422:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 501:
		return "UNIMPLEMENTED"
	case 503, 529:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

// statusText is http.StatusText that also knows Anthropic's 529.
func statusText(status int) string {
	if status == 529 {
		return "Overloaded"
	}
	return http.StatusText(status)
}
