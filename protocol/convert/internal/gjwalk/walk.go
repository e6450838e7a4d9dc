// Package gjwalk reads JSON bodies as gjson Results, walking them with
// jsonwalk: the request decoders and the answer decoders of package
// convert both read bodies this way.
//
// The request decoders read a client body through gjson.Results, and an
// agent's body is mostly long strings: prompts, tool schemas, file
// contents. gjson's ForEach and Array find the end of every member and
// element by stepping through each byte of it (squash), which was a third
// of converting a Claude Code request (perf). ForEach and Elements walk
// with jsonwalk instead, jumping from quote to quote, and hand over the
// same Results.
package gjwalk

import (
	"iter"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol/jsonwalk"
)

// ForEach is v.ForEach, with the same callback: for an object its members
// (the key as a string Result holding the unescaped name), for an array
// its elements (with an empty key), until fn returns false. Anything else
// goes to gjson's own ForEach, which passes a scalar once.
func ForEach(v gjson.Result, fn func(k, v gjson.Result) bool) {
	switch {
	case v.IsObject():
		jsonwalk.Members(v.Raw, func(k, raw string) bool {
			return fn(gjson.Result{Type: gjson.String, Str: memberName(k)}, result(raw))
		})
	case v.IsArray():
		jsonwalk.Elements(v.Raw, func(raw string) bool {
			return fn(gjson.Result{}, result(raw))
		})
	default:
		v.ForEach(fn)
	}
}

// Elements ranges over what v.Array() holds, index and element: an array's
// elements, nothing for null or an absent value, v itself for anything
// else.
func Elements(v gjson.Result) iter.Seq2[int, gjson.Result] {
	return func(yield func(int, gjson.Result) bool) {
		if !v.IsArray() {
			for i, x := range v.Array() {
				if !yield(i, x) {
					return
				}
			}
			return
		}
		i := 0
		jsonwalk.Elements(v.Raw, func(raw string) bool {
			ok := yield(i, result(raw))
			i++
			return ok
		})
	}
}

// result is the gjson.Result of one raw JSON value found by a walk. A
// string without escapes is its bytes between the quotes; gjson.Parse
// would step through them again to find that out. Objects and arrays
// cost gjson.Parse nothing (it keeps them raw), numbers and literals
// little.
func result(raw string) gjson.Result {
	if len(raw) >= 2 && raw[0] == '"' && strings.IndexByte(raw, '\\') < 0 {
		return gjson.Result{Type: gjson.String, Raw: raw, Str: raw[1 : len(raw)-1]}
	}
	return gjson.Parse(raw)
}

// memberName is a member's key as written, unescaped as gjson reads it.
func memberName(k string) string {
	if strings.IndexByte(k, '\\') < 0 {
		return k
	}
	return gjson.Parse(`"` + k + `"`).Str
}

// Parse is gjson.ParseBytes(body) without its copy of the body (64 KB
// for a Claude Code request, as large again as the conversion's output).
// The Results point into body, which a conversion reads and never keeps:
// what it returns it writes anew.
func Parse(body []byte) gjson.Result { return gjson.Parse(jsonwalk.View(body)) }
