package convert

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/jsonwalk"
)

// reqJSON is an append-based JSON writer. It only inserts the commas: callers
// write keys and values in order, so the output keeps the order we choose and
// costs one growing buffer. raw values must be valid JSON (they come from a
// body already checked by reqValidObject).
type reqJSON struct {
	b        []byte
	stack    []bool // per open container: has an element already
	afterKey bool
}

func rqNewJSON(size int) *reqJSON {
	return &reqJSON{b: make([]byte, 0, size), stack: make([]bool, 0, 16)}
}

func (w *reqJSON) sep() {
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

func (w *reqJSON) key(k string) {
	w.sep()
	w.b = rqAppendString(w.b, k)
	w.b = append(w.b, ':')
	w.afterKey = true
}

func (w *reqJSON) obj()         { w.open('{') }
func (w *reqJSON) arr()         { w.open('[') }
func (w *reqJSON) endObj()      { w.close('}') }
func (w *reqJSON) endArr()      { w.close(']') }
func (w *reqJSON) str(s string) { w.sep(); w.b = rqAppendString(w.b, s) }
func (w *reqJSON) raw(r string) { w.sep(); w.b = append(w.b, r...) }
func (w *reqJSON) int(i int64)  { w.sep(); w.b = strconv.AppendInt(w.b, i, 10) }
func (w *reqJSON) bool(v bool)  { w.sep(); w.b = strconv.AppendBool(w.b, v) }

func (w *reqJSON) open(c byte) {
	w.sep()
	w.b = append(w.b, c)
	w.stack = append(w.stack, false)
}

func (w *reqJSON) close(c byte) {
	w.b = append(w.b, c)
	w.stack = w.stack[:len(w.stack)-1]
}

// Shorthands for a key and its value.
func (w *reqJSON) kstr(k, v string) { w.key(k); w.str(v) }
func (w *reqJSON) kraw(k, v string) { w.key(k); w.raw(v) }
func (w *reqJSON) kint(k string, v int64) {
	w.key(k)
	w.int(v)
}

// kopt writes a raw number when it is set.
func (w *reqJSON) kopt(k, v string) {
	if v != "" {
		w.kraw(k, v)
	}
}

// rqAppendString appends s as a JSON string (protocol.AppendJSONString).
func rqAppendString(b []byte, s string) []byte { return protocol.AppendJSONString(b, s) }

// reqValidObject reports whether body is one valid JSON object.
func reqValidObject(body []byte) bool {
	if !jsonwalk.Valid(jsonwalk.View(body)) {
		return false
	}
	return parseBody(body).IsObject()
}

// number returns the JSON text of a number field, "" when absent or null.
func reqNumber(v gjson.Result, field string) (string, error) {
	switch v.Type {
	case gjson.Null:
		return "", nil
	case gjson.Number:
		return v.Raw, nil
	}
	return "", rqBadRequest("%s: want a number", field)
}

// integer returns an integer field, 0 when absent or null.
func reqInt(v gjson.Result, field string) (int64, error) {
	switch v.Type {
	case gjson.Null:
		return 0, nil
	case gjson.Number:
		if f := v.Float(); f == float64(int64(f)) {
			return int64(f), nil
		}
	}
	return 0, rqBadRequest("%s: want an integer", field)
}

// stringList reads a string or an array of strings (stop sequences).
func reqStrings(v gjson.Result, field string) ([]string, error) {
	switch {
	case v.Type == gjson.Null:
		return nil, nil
	case v.Type == gjson.String:
		return []string{v.Str}, nil
	case v.IsArray():
		var out []string
		var err error
		forEach(v, func(_, s gjson.Result) bool {
			if s.Type != gjson.String {
				err = rqBadRequest("%s: want strings", field)
				return false
			}
			out = append(out, s.Str)
			return true
		})
		return out, err
	}
	return nil, rqBadRequest("%s: want a string or an array of strings", field)
}

// isZero reports whether a hint-like numeric or boolean field is absent or
// at its no-op value (0, false, null), so sending it nowhere changes nothing.
func reqZero(v gjson.Result) bool {
	switch v.Type {
	case gjson.Null, gjson.False:
		return true
	case gjson.Number:
		return v.Num == 0
	}
	return false
}

// reqParseDataURL splits a base64 data URL ("data:image/png;base64,AAAA").
func reqParseDataURL(u string) (mime, data string, ok bool) {
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

func reqDataURL(mime, data string) string { return "data:" + mime + ";base64," + data }

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
type rqSchemaMode uint8

const (
	rqSchemaToGemini rqSchemaMode = iota + 1
	rqSchemaFromGemini
)

// rqMaxSchemaDepth bounds the rewrite on hostile input; deeper parts are kept
// as they are.
const rqMaxSchemaDepth = 64

// Keywords whose value is a schema, a map of schemas, or a list of schemas.
var (
	rqSchemaOne  = map[string]bool{"items": true, "additionalProperties": true, "not": true, "if": true, "then": true, "else": true, "contains": true, "propertyNames": true, "unevaluatedItems": true, "unevaluatedProperties": true, "additionalItems": true}
	rqSchemaMap  = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}
	rqSchemaList = map[string]bool{"anyOf": true, "oneOf": true, "allOf": true, "prefixItems": true}
)

func rqAppendSchema(w *reqJSON, s gjson.Result, mode rqSchemaMode, depth int) {
	if !s.IsObject() || depth > rqMaxSchemaDepth {
		if s.IsArray() && depth <= rqMaxSchemaDepth { // old tuple form of items
			w.arr()
			forEach(s, func(_, v gjson.Result) bool { rqAppendSchema(w, v, mode, depth+1); return true })
			w.endArr()
			return
		}
		w.raw(s.Raw)
		return
	}
	var nullable bool
	if mode == rqSchemaFromGemini {
		// pick, not Get: a Get walks the node a byte at a time, all of it
		// (nested properties too) when there is no nullable, at every
		// level of the schema.
		var m [1]gjson.Result
		pick(s, []string{"nullable"}, m[:])
		nullable = m[0].Bool()
	}
	w.obj()
	forEach(s, func(k, v gjson.Result) bool {
		key := k.Str
		switch {
		case mode == rqSchemaToGemini && (key == "$schema" || key == "$comment"):
		case mode == rqSchemaFromGemini && (key == "propertyOrdering" || key == "nullable"):
		case mode == rqSchemaFromGemini && key == "type":
			w.key("type")
			rqAppendLowerType(w, v, nullable)
		case rqSchemaOne[key]:
			w.key(key)
			rqAppendSchema(w, v, mode, depth+1)
		case rqSchemaMap[key] && v.IsObject():
			w.key(key)
			w.obj()
			forEach(v, func(pk, pv gjson.Result) bool {
				w.key(pk.Str)
				rqAppendSchema(w, pv, mode, depth+1)
				return true
			})
			w.endObj()
		case rqSchemaList[key] && v.IsArray():
			w.key(key)
			w.arr()
			forEach(v, func(_, pv gjson.Result) bool { rqAppendSchema(w, pv, mode, depth+1); return true })
			w.endArr()
		default:
			w.key(key)
			w.raw(v.Raw)
		}
		return true
	})
	w.endObj()
}

func rqAppendLowerType(w *reqJSON, v gjson.Result, nullable bool) {
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
		forEach(v, func(_, t gjson.Result) bool { w.str(strings.ToLower(t.String())); return true })
		w.endArr()
		return
	}
	w.raw(v.Raw)
}

// rqSchemaText rewrites a schema into a standalone JSON text.
func rqSchemaText(s gjson.Result, mode rqSchemaMode) string {
	w := rqNewJSON(len(s.Raw) + 16)
	rqAppendSchema(w, s, mode, 0)
	return string(w.b)
}

// The reasoning budget <-> effort table (documented in doc.go).
var rqEffortBudgets = map[string]int64{
	"minimal": 1024,
	"low":     4096,
	"medium":  16384,
	"high":    32768,
	"xhigh":   49152,
	"max":     65536,
}

// rqBudgetEffort maps a token budget to an effort level.
func rqBudgetEffort(b int64) string {
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
		return rqBudgetEffort(r.Budget)
	}
	return ""
}

// budget is the token budget a target with budgets should get, 0 for none.
func (r Reasoning) budget() int64 {
	if r.Budget > 0 {
		return r.Budget
	}
	return rqEffortBudgets[r.Effort]
}

var rqKnownEfforts = map[string]bool{"none": true, "minimal": true, "low": true, "medium": true, "high": true, "xhigh": true, "max": true}

func rqCheckEffort(e, field string) error {
	if !rqKnownEfforts[e] {
		return rqBadRequest("%s: unknown effort %q", field, e)
	}
	return nil
}
