package convert

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/jsonwalk"
)

// JSON writing helpers of the response side. Everything is appended to a
// caller-owned buffer so a converted event costs no allocation once the
// buffers have grown.

// wjStr appends s as a JSON string literal (protocol.AppendJSONString).
func wjStr(dst []byte, s string) []byte { return protocol.AppendJSONString(dst, s) }

// wjInt appends n in decimal.
func wjInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// wjLitOr appends lit, a JSON literal, or def when lit is empty.
func wjLitOr(dst []byte, lit, def string) []byte {
	if lit == "" {
		return append(dst, def...)
	}
	return append(dst, lit...)
}

// litInner is the content of a JSON string literal between its quotes, still
// escaped. Concatenating the inner parts of several literals gives the inner
// part of the literal of the concatenated values, which is how deltas are
// joined without unescaping them.
func litInner(lit string) string {
	if len(lit) < 2 {
		return ""
	}
	return lit[1 : len(lit)-1]
}

// unescapeInner decodes the escaped content of a JSON string.
func unescapeInner(inner []byte) string {
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	lit := make([]byte, 0, len(inner)+2)
	lit = append(lit, '"')
	lit = append(lit, inner...)
	lit = append(lit, '"')
	return gjson.ParseBytes(lit).String()
}

// bstr views b as a string without copying. The string is valid only as long
// as b is; anything kept past the current event is cloned.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// strLit returns r's JSON string literal, or "" when r is absent, null, or
// not a string. Non-string scalars are not coerced: the APIs send strings.
func strLit(r gjson.Result) string {
	if r.Type != gjson.String {
		return ""
	}
	return r.Raw
}

// nonEmptyLit reports whether lit is a string literal with content.
func nonEmptyLit(lit string) bool { return len(lit) > 2 }

// compactJSON appends the compact form of the JSON text raw, or raw itself
// when it does not parse (callers validate first).
func compactJSON(dst []byte, raw string) []byte {
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, unsafe.Slice(unsafe.StringData(raw), len(raw))); err != nil {
		return append(dst, raw...)
	}
	return buf.Bytes()
}

// sseOpen starts an SSE block: "event: name\n" (when name is set) and
// "data: ". The caller appends one line of JSON and sseClose.
func sseOpen(dst []byte, name string) []byte {
	if name != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		dst = append(dst, '\n')
	}
	return append(dst, "data: "...)
}

// sseClose ends an SSE block.
func sseClose(dst []byte) []byte { return append(dst, '\n', '\n') }

// litField returns the raw JSON string literal of key in the JSON object
// obj, or "" when obj is not an object or the key is absent or not a string.
// gjson unescapes every string value it returns, which allocates for each
// delta holding a newline or a quote; the converters only copy the literal,
// so the hot delta fields are read with this instead (jsonwalk). obj must
// be valid JSON (the pipe checks every event); keys are compared as
// written, escapes kept, which is all the APIs' keys need.
func litField(obj, key string) string {
	if v := jsonwalk.Member(obj, key); strings.HasPrefix(v, `"`) {
		return v
	}
	return ""
}
