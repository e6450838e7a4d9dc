package failure

import (
	"bytes"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol/jsonwalk"
)

// maxScan bounds how much of a body is searched for texts.
const maxScan = 8 << 10

// upstreamErr is what an upstream said about its error, in any of the
// three vocabularies (Anthropic, OpenAI, Gemini) or as plain text.
type upstreamErr struct {
	typ     string // error.type: "rate_limit_error", "invalid_request_error"
	code    string // error.code when a string: "insufficient_quota", "model_cooldown"
	num     int    // error.code when a number: 429 (Gemini)
	status  string // error.status: "RESOURCE_EXHAUSTED"
	message string
	extra   string // more words for the haystack: details[].reason, wrapper codes
	text    string // lower-cased haystack for the text rules, built by finish
	codes   string // the same without the message: what a 4xx is judged by

	retryDelay time.Duration // google.rpc.RetryInfo
	plain      Outcome       // set when a plain-text rule matched a 2xx body
}

// impliedStatus is the HTTP status an error found in a 200 body stands for.
func (u upstreamErr) impliedStatus() int {
	for _, s := range []string{u.code, u.status, u.typ} {
		if st, ok := errorStatus[strings.ToLower(s)]; ok {
			return st
		}
	}
	if u.num >= 400 && u.num < 600 {
		return u.num
	}
	return 500
}

// errorStatus maps the error vocabularies of the providers to HTTP statuses.
var errorStatus = map[string]int{
	// Anthropic error.type
	"invalid_request_error": 400,
	"authentication_error":  401,
	"billing_error":         402,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"overloaded_error":      529,
	"timeout_error":         504,
	// OpenAI error.code and error.type
	"invalid_api_key":         401,
	"insufficient_quota":      429,
	"rate_limit_exceeded":     429,
	"tokens":                  429,
	"requests":                429,
	"model_not_found":         404,
	"context_length_exceeded": 400,
	"server_error":            500,
	// Gemini error.status (google.rpc.Code names)
	"invalid_argument":    400,
	"failed_precondition": 400,
	"out_of_range":        400,
	"unauthenticated":     401,
	"permission_denied":   403,
	"not_found":           404,
	"resource_exhausted":  429,
	"cancelled":           499,
	"internal":            500,
	"unknown":             500,
	"unavailable":         503,
	"deadline_exceeded":   504,
	// gateways in front of providers
	"model_cooldown": 429,
}

// inspect extracts what it can from the body of a non-2xx response.
func inspect(body []byte) upstreamErr {
	b := trimBody(body)
	switch {
	case len(b) == 0:
		return upstreamErr{}
	case isJSONStart(b):
		if u, ok := fromJSON(gjson.ParseBytes(b)); ok {
			return u
		}
	case isSSE(b):
		if u, ok := fromSSE(b); ok {
			return u
		}
	}
	return fromText(b)
}

// findSoftError looks for an error in a body that came with a 2xx status.
func findSoftError(body []byte) (upstreamErr, bool) {
	b := trimBody(body)
	switch {
	case len(b) == 0:
		return upstreamErr{}, false
	case isJSONStart(b):
		if !mayHoldError(b) {
			return upstreamErr{}, false
		}
		return fromJSON(gjson.ParseBytes(b))
	case isSSE(b):
		return fromSSE(b)
	}
	u := fromText(b)
	switch {
	case containsAny(u.text, overloadTexts):
		u.plain = Outcome{Kind: KindServer, Scope: ScopeModel, Retry: true}
	case containsAny(u.text, rateLimitTexts):
		u.plain = Outcome{Kind: KindRateLimit, Scope: ScopeKey, Retry: true}
	default:
		return upstreamErr{}, false
	}
	return u, true
}

// mayHoldError is a cheap first look at a JSON body, true when fromObject
// could find an error in it: an array (any chunk may be one), or an object
// with an "error" member that is not null, a "type" of error or
// response.failed, or a "status" of failed. Nearly every 2xx body has none of these; for those
// one walk over the top-level members, with no copy of the body, replaces
// a copy and four walks (perf).
func mayHoldError(b []byte) bool {
	if len(b) == 0 || b[0] != '{' {
		return true
	}
	// The view does not outlive this function: members are only compared.
	// jsonwalk rather than gjson: see its package comment.
	found := false
	jsonwalk.Members(jsonwalk.View(b), func(k, v string) bool {
		switch k {
		case "error": // as fromObject reads it: an object, a message or true, not null
			found = strings.HasPrefix(v, "{") || jsonwalk.Text(v) || v == "true"
		case "type":
			found = v == `"error"` || v == `"response.failed"`
		case "status":
			found = v == `"failed"`
		}
		return !found
	})
	return found
}

// fromJSON finds an error object in a JSON document. Gemini streams without
// SSE are arrays of chunks; any element may be the error.
func fromJSON(root gjson.Result) (upstreamErr, bool) { return fromJSONDepth(root, 0) }

func fromJSONDepth(root gjson.Result, depth int) (upstreamErr, bool) {
	if root.IsArray() {
		var (
			u     upstreamErr
			found bool
		)
		root.ForEach(func(_, el gjson.Result) bool {
			if el.IsObject() {
				u, found = fromObject(el, depth)
			}
			return !found
		})
		return u, found
	}
	return fromObject(root, depth)
}

// fromObject finds an error in one JSON object.
func fromObject(root gjson.Result, depth int) (upstreamErr, bool) {
	if !root.IsObject() {
		return upstreamErr{}, false
	}
	e := root.Get("error")
	switch {
	case e.IsObject():
		return fromErrorObject(e, depth), true
	case e.Type == gjson.String && e.Str != "":
		return finish(upstreamErr{message: e.Str}), true
	case e.Type == gjson.True: // {"error":true,"message":"..."}
		return fromErrorObject(root, depth), true
	}
	switch root.Get("type").Str {
	case "error": // Responses stream: {"type":"error","code":...,"message":...}
		return fromErrorObject(root, depth), true
	case "response.failed":
		return fromErrorObject(root.Get("response.error"), depth), true
	}
	if root.Get("status").Str == "failed" && root.Get("object").Str == "response" {
		return fromErrorObject(root.Get("error"), depth), true // non-stream Responses
	}
	return upstreamErr{}, false
}

// fromErrorObject reads one error object of any provider.
func fromErrorObject(e gjson.Result, depth int) upstreamErr {
	u := upstreamErr{
		typ:     e.Get("type").String(),
		status:  e.Get("status").String(),
		message: e.Get("message").String(),
	}
	if c := e.Get("code"); c.Type == gjson.Number {
		u.num = int(c.Int())
	} else {
		u.code = c.String()
	}
	var reasons []string
	e.Get("details").ForEach(func(_, d gjson.Result) bool {
		if r := d.Get("reason").String(); r != "" {
			reasons = append(reasons, r)
		}
		if rd := d.Get("retryDelay"); rd.Exists() && u.retryDelay == 0 {
			u.retryDelay = parseDelay(rd.String())
		}
		return true
	})
	u.extra = strings.Join(reasons, " ")

	// Gateways and SDK wrappers often put the upstream's JSON error, as a
	// string, into their own message. Two levels are plenty.
	if m := strings.TrimSpace(u.message); depth < 2 && len(m) > 1 && (m[0] == '{' || m[0] == '[') {
		if inner, ok := fromJSONDepth(gjson.Parse(m), depth+1); ok {
			if inner.num == 0 {
				inner.num = u.num
			}
			inner.extra += " " + u.typ + " " + u.code + " " + u.status
			return finish(inner)
		}
	}
	return finish(u)
}

// finish builds the haystack the text rules search.
func finish(u upstreamErr) upstreamErr {
	u.codes = strings.ToLower(strings.Join([]string{u.typ, u.code, u.status, u.extra}, " "))
	u.text = u.codes + " " + strings.ToLower(u.message)
	return u
}

// fromText treats a body as text (HTML error pages included).
func fromText(b []byte) upstreamErr {
	if len(b) > maxScan {
		b = b[:maxScan]
	}
	s := string(b)
	return upstreamErr{message: textMessage(s), text: strings.ToLower(s)}
}

// fromSSE scans server-sent events for the first error, up to "[DONE]".
// Only complete lines are needed; a last event cut short still counts.
func fromSSE(b []byte) (upstreamErr, bool) {
	var (
		event string
		data  []byte
	)
	check := func() (upstreamErr, bool) {
		defer func() { event, data = "", data[:0] }()
		d := bytes.TrimSpace(data)
		switch {
		case event == "error", event == "response.failed":
			root := gjson.ParseBytes(d)
			u, ok := fromJSON(root)
			if !ok && root.IsObject() {
				u = fromErrorObject(root, 0)
			}
			if u.message == "" && u.typ == "" && u.code == "" && u.status == "" {
				u.message = string(d) // cut short or not JSON: keep it for the log
				u = finish(u)
			}
			return u, true
		case len(d) > 0 && isJSONStart(d):
			return fromJSON(gjson.ParseBytes(d))
		}
		return upstreamErr{}, false
	}
	for len(b) > 0 {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			if u, ok := check(); ok {
				return u, true
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			event = string(value)
		case "data":
			if string(value) == "[DONE]" {
				return upstreamErr{}, false
			}
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, value...)
		}
	}
	return check()
}

func trimBody(b []byte) []byte {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // UTF-8 BOM
	return bytes.TrimSpace(b)
}

func isJSONStart(b []byte) bool { return b[0] == '{' || b[0] == '[' }

func isSSE(b []byte) bool {
	for _, p := range []string{"event:", "data:", "id:", "retry:", ":"} {
		if bytes.HasPrefix(b, []byte(p)) {
			return true
		}
	}
	return false
}

// textMessage picks a short message out of a text or HTML body: the HTML
// title, else the first non-empty line.
func textMessage(s string) string {
	lower := strings.ToLower(s)
	if i := strings.Index(lower, "<title>"); i >= 0 {
		rest := s[i+len("<title>"):]
		if j := strings.Index(strings.ToLower(rest), "</title>"); j >= 0 {
			return strings.TrimSpace(rest[:j])
		}
	}
	for line := range strings.Lines(s) {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}
