package request

import (
	"strings"

	"github.com/ccload/ccload/protocol/convert/internal/gjwalk"
	"github.com/tidwall/gjson"
)

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

// schemaFormat writes the members OpenAI's two APIs give a structured
// output schema (Chat response_format.json_schema, Responses text.format):
// name, description, schema, strict. Anthropic and Gemini take the schema
// alone.
func (w *writer) schemaFormat(f *OutputFormat) {
	w.kstr("name", formatName(f))
	if f.Desc != "" {
		w.kstr("description", f.Desc)
	}
	w.kraw("schema", f.Schema)
	w.ktri("strict", f.Strict)
}

// formatName is the json_schema name OpenAI requires; Gemini and Anthropic
// have none.
func formatName(f *OutputFormat) string {
	if f.Name != "" {
		return f.Name
	}
	return "response"
}
