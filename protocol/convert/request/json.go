package request

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert/internal/gjwalk"
	"github.com/ccload/ccload/protocol/jsonwalk"
)

// writer is an append-based JSON writer. It only inserts the commas: callers
// write keys and values in order, so the output keeps the order we choose and
// costs one growing buffer. raw values must be valid JSON (they come from a
// body already checked by validObject).
type writer struct {
	b        []byte
	stack    []bool // per open container: has an element already
	afterKey bool
}

func newWriter(size int) *writer {
	return &writer{b: make([]byte, 0, size), stack: make([]bool, 0, 16)}
}

func (w *writer) sep() {
	if w.afterKey {
		w.afterKey = false
		return
	}
	if n := len(w.stack); n > 0 {
		if w.stack[n-1] {
			w.b = append(w.b, ',')
		}
		w.stack[n-1] = true
	}
}

func (w *writer) key(k string) {
	w.sep()
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':')
	w.afterKey = true
}

func (w *writer) obj()         { w.open('{') }
func (w *writer) arr()         { w.open('[') }
func (w *writer) endObj()      { w.close('}') }
func (w *writer) endArr()      { w.close(']') }
func (w *writer) str(s string) { w.sep(); w.b = appendString(w.b, s) }
func (w *writer) raw(r string) { w.sep(); w.b = append(w.b, r...) }
func (w *writer) int(i int64)  { w.sep(); w.b = strconv.AppendInt(w.b, i, 10) }
func (w *writer) bool(v bool)  { w.sep(); w.b = strconv.AppendBool(w.b, v) }

func (w *writer) open(c byte) {
	w.sep()
	w.b = append(w.b, c)
	w.stack = append(w.stack, false)
}

func (w *writer) close(c byte) {
	w.b = append(w.b, c)
	w.stack = w.stack[:len(w.stack)-1]
}

// Shorthands for a key and its value.
func (w *writer) kstr(k, v string) { w.key(k); w.str(v) }
func (w *writer) kraw(k, v string) { w.key(k); w.raw(v) }
func (w *writer) kint(k string, v int64) {
	w.key(k)
	w.int(v)
}

// kopt writes a raw number when it is set.
func (w *writer) kopt(k, v string) {
	if v != "" {
		w.kraw(k, v)
	}
}

// appendString appends s as a JSON string (protocol.AppendJSONString).
func appendString(b []byte, s string) []byte { return protocol.AppendJSONString(b, s) }

// validObject reports whether body is one valid JSON object.
func validObject(body []byte) bool {
	if !jsonwalk.Valid(jsonwalk.View(body)) {
		return false
	}
	return gjwalk.Parse(body).IsObject()
}

// number returns the JSON text of a number field, "" when absent or null.
func number(v gjson.Result, field string) (string, error) {
	switch v.Type {
	case gjson.Null:
		return "", nil
	case gjson.Number:
		return v.Raw, nil
	}
	return "", badRequest("%s: want a number", field)
}

// integer returns an integer field, 0 when absent or null.
func integer(v gjson.Result, field string) (int64, error) {
	switch v.Type {
	case gjson.Null:
		return 0, nil
	case gjson.Number:
		if f := v.Float(); f == float64(int64(f)) {
			return int64(f), nil
		}
	}
	return 0, badRequest("%s: want an integer", field)
}

// stringList reads a string or an array of strings (stop sequences).
func stringList(v gjson.Result, field string) ([]string, error) {
	switch {
	case v.Type == gjson.Null:
		return nil, nil
	case v.Type == gjson.String:
		return []string{v.Str}, nil
	case v.IsArray():
		var out []string
		var err error
		gjwalk.ForEach(v, func(_, s gjson.Result) bool {
			if s.Type != gjson.String {
				err = badRequest("%s: want strings", field)
				return false
			}
			out = append(out, s.Str)
			return true
		})
		return out, err
	}
	return nil, badRequest("%s: want a string or an array of strings", field)
}

// isZero reports whether a hint-like numeric or boolean field is absent or
// at its no-op value (0, false, null), so sending it nowhere changes nothing.
func isZero(v gjson.Result) bool {
	switch v.Type {
	case gjson.Null, gjson.False:
		return true
	case gjson.Number:
		return v.Num == 0
	}
	return false
}

// parseDataURL splits a base64 data URL ("data:image/png;base64,AAAA").
func parseDataURL(u string) (mime, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	mime, found = strings.CutSuffix(meta, ";base64")
	if !found {
		return "", "", false
	}
	return mime, data, true
}

func dataURL(mime, data string) string { return "data:" + mime + ";base64," + data }

// Schema rewriting. Tool parameters and structured-output schemas pass
// through as JSON Schema, with two adjustments:
//
//   - toward Gemini (sent as parametersJsonSchema / responseJsonSchema, which
//     take JSON Schema, so nothing of meaning is removed): the annotation-only
//     keywords $schema and $comment are dropped.
//   - from Gemini (its OpenAPI-style Schema, and the uppercase types Gemini
//     CLI also puts in responseJsonSchema): "OBJECT" becomes "object",
//     nullable:true becomes a ["T","null"] type, and propertyOrdering (an
//     output-order hint no other family has) is dropped.
type schemaMode uint8

const (
	schemaToGemini schemaMode = iota + 1
	schemaFromGemini
)

// maxSchemaDepth bounds the rewrite on hostile input; deeper parts are kept
// as they are.
const maxSchemaDepth = 64

// Keywords whose value is a schema, a map of schemas, or a list of schemas.
var (
	schemaOne  = map[string]bool{"items": true, "additionalProperties": true, "not": true, "if": true, "then": true, "else": true, "contains": true, "propertyNames": true, "unevaluatedItems": true, "unevaluatedProperties": true, "additionalItems": true}
	schemaMap  = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}
	schemaList = map[string]bool{"anyOf": true, "oneOf": true, "allOf": true, "prefixItems": true}
)

func appendSchema(w *writer, s gjson.Result, mode schemaMode, depth int) {
	if !s.IsObject() || depth > maxSchemaDepth {
		if s.IsArray() && depth <= maxSchemaDepth { // old tuple form of items
			w.arr()
			gjwalk.ForEach(s, func(_, v gjson.Result) bool { appendSchema(w, v, mode, depth+1); return true })
			w.endArr()
			return
		}
		w.raw(s.Raw)
		return
	}
	var nullable bool
	if mode == schemaFromGemini {
		// pick, not Get: a Get walks the node a byte at a time, all of it
		// (nested properties too) when there is no nullable, at every
		// level of the schema.
		var m [1]gjson.Result
		gjwalk.Pick(s, []string{"nullable"}, m[:])
		nullable = m[0].Bool()
	}
	w.obj()
	gjwalk.ForEach(s, func(k, v gjson.Result) bool {
		key := k.Str
		switch {
		case mode == schemaToGemini && (key == "$schema" || key == "$comment"):
		case mode == schemaFromGemini && (key == "propertyOrdering" || key == "nullable"):
		case mode == schemaFromGemini && key == "type":
			w.key("type")
			appendLowerType(w, v, nullable)
		case schemaOne[key]:
			w.key(key)
			appendSchema(w, v, mode, depth+1)
		case schemaMap[key] && v.IsObject():
			w.key(key)
			w.obj()
			gjwalk.ForEach(v, func(pk, pv gjson.Result) bool {
				w.key(pk.Str)
				appendSchema(w, pv, mode, depth+1)
				return true
			})
			w.endObj()
		case schemaList[key] && v.IsArray():
			w.key(key)
			w.arr()
			gjwalk.ForEach(v, func(_, pv gjson.Result) bool { appendSchema(w, pv, mode, depth+1); return true })
			w.endArr()
		default:
			w.key(key)
			w.raw(v.Raw)
		}
		return true
	})
	w.endObj()
}

func appendLowerType(w *writer, v gjson.Result, nullable bool) {
	if v.Type == gjson.String {
		t := strings.ToLower(v.Str)
		if nullable && t != "null" {
			w.arr()
			w.str(t)
			w.str("null")
			w.endArr()
			return
		}
		w.str(t)
		return
	}
	if v.IsArray() {
		w.arr()
		gjwalk.ForEach(v, func(_, t gjson.Result) bool { w.str(strings.ToLower(t.String())); return true })
		w.endArr()
		return
	}
	w.raw(v.Raw)
}

// schemaText rewrites a schema into a standalone JSON text.
func schemaText(s gjson.Result, mode schemaMode) string {
	w := newWriter(len(s.Raw) + 16)
	appendSchema(w, s, mode, 0)
	return string(w.b)
}

// The reasoning budget <-> effort table (documented in doc.go).
var effortBudgets = map[string]int64{
	"minimal": 1024,
	"low":     4096,
	"medium":  16384,
	"high":    32768,
	"xhigh":   49152,
	"max":     65536,
}

// budgetEffort maps a token budget to an effort level.
func budgetEffort(b int64) string {
	switch {
	case b <= 0:
		return "none"
	case b < 8192:
		return "low"
	case b < 24576:
		return "medium"
	}
	return "high"
}

// effort is the effort level a target with levels should get, "" for the
// target's default.
func (r Reasoning) effort() string {
	if r.Effort != "" {
		return r.Effort
	}
	if r.Budget > 0 {
		return budgetEffort(r.Budget)
	}
	return ""
}

// budget is the token budget a target with budgets should get, 0 for none.
func (r Reasoning) budget() int64 {
	if r.Budget > 0 {
		return r.Budget
	}
	return effortBudgets[r.Effort]
}

var knownEfforts = map[string]bool{"none": true, "minimal": true, "low": true, "medium": true, "high": true, "xhigh": true, "max": true}

func checkEffort(e, field string) error {
	if !knownEfforts[e] {
		return badRequest("%s: unknown effort %q", field, e)
	}
	return nil
}
