package count

import (
	"errors"
	"fmt"
	"math"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol/jsonwalk"
)

// ErrInvalid reports a body that is not a request of the expected shape (not
// a JSON object, messages not an array, ...). The wrapped message names the
// field. The engine answers 400 in the client's error shape, as the upstream
// would.
var ErrInvalid = errors.New("invalid request")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// parseObject parses a request body that must be a JSON object.
func parseObject(body []byte) (gjson.Result, error) {
	if !jsonwalk.Valid(jsonwalk.View(body)) {
		return gjson.Result{}, invalid("request body is not valid JSON")
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return gjson.Result{}, invalid("request body is not a JSON object")
	}
	return root, nil
}

// tally adds up a request. text is o200k_base tokens of everything the model
// reads as text (scaled by the family's factor at the end); fixed is tokens
// already in the target model's units: structural overheads, media, the
// documented tool-use system prompt.
type tally struct {
	b     *bpe
	text  int
	fixed int
}

func (t *tally) addText(s string) { t.text += t.b.count(s) }

// addJSON counts a JSON value as the model reads it: compact (indentation
// and spaces between tokens in the client's body are not sent to the model
// as such). String values are counted with their quotes and escapes.
func (t *tally) addJSON(v gjson.Result) {
	if !v.Exists() {
		return
	}
	raw := v.Raw
	if v.IsObject() || v.IsArray() {
		raw = gjson.Get(raw, "@ugly").Raw
	}
	t.addText(raw)
}

// addStrings counts the string values inside a block the counter has no
// model for (server tool results, future block types): everything a model
// could be shown, without ids, signatures, encrypted payloads and base64.
func (t *tally) addStrings(v gjson.Result) {
	switch {
	case v.Type == gjson.String:
		t.addText(v.Str)
	case v.IsObject():
		v.ForEach(func(k, x gjson.Result) bool {
			switch k.Str {
			case "type", "id", "tool_use_id", "cache_control", "signature", "encrypted_content",
				"encrypted_index", "data", "media_type", "mime_type", "mimeType", "file_id":
			default:
				t.addStrings(x)
			}
			return true
		})
	case v.IsArray():
		v.ForEach(func(_, x gjson.Result) bool {
			t.addStrings(x)
			return true
		})
	}
}

func (t *tally) total(factor float64) int {
	return int(math.Round(float64(t.text)*factor)) + t.fixed
}
