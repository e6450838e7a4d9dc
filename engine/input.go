package engine

import (
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// checkInput is the strict reading of a client body every family gets
// before anything else looks at it (issue 16): valid UTF-8, one JSON
// object, and the fields the gateway itself reads typed as the protocols
// define them. A body that fails is the client's fault: answered 400 in its
// error shape, sent to no upstream, cooling nothing.
func checkInput(body []byte) *clientError {
	if !utf8.Valid(body) {
		return &clientError{Status: 400, Msg: "request body is not valid UTF-8"}
	}
	if !gjson.ValidBytes(body) {
		return &clientError{Status: 400, Msg: "request body is not valid JSON"}
	}
	if !gjson.ParseBytes(body).IsObject() {
		return &clientError{Status: 400, Msg: "request body is not a JSON object"}
	}
	if m := gjson.GetBytes(body, "model"); m.Exists() {
		if m.Type != gjson.String || m.Str == "" {
			return &clientError{Status: 400, Msg: `"model" must be a non-empty string`}
		}
		if strings.IndexFunc(m.Str, isControl) >= 0 {
			return &clientError{Status: 400, Msg: `"model" holds control characters`}
		}
	}
	for _, path := range []string{"stream", "stream_options.include_usage"} {
		if v := gjson.GetBytes(body, path); v.Exists() && v.Type != gjson.True && v.Type != gjson.False {
			return &clientError{Status: 400, Msg: `"` + path + `" must be true or false`}
		}
	}
	return nil
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f || r >= 0x80 && r < 0xa0 }
