package request

import "github.com/tidwall/gjson"

// toolShape is how one upstream family writes a function tool's members;
// every encoder writes tools through functionTool with its shape, so a
// tool is offered alike everywhere (a custom tool in its function shape,
// the description only when there is one).
type toolShape struct {
	params      string // the schema's key
	emptyParams string // written when the tool has no schema; "" leaves the key out
	gemini      bool   // the schema is rewritten for Gemini (schemaToGemini)
	strict      strictRule
}

// strictRule says when a family's tool carries "strict".
type strictRule uint8

const (
	strictNever    strictRule = iota // no such member (Gemini)
	strictWhenTrue                   // only strict: true (Anthropic)
	strictWhenSet                    // as the client set it (Chat)
	strictAlways                     // always, false unless asked (Responses: its default is true)
)

var (
	anthropicTool = toolShape{params: "input_schema", emptyParams: `{"type":"object","properties":{}}`, strict: strictWhenTrue}
	chatTool      = toolShape{params: "parameters", strict: strictWhenSet}
	responsesTool = toolShape{params: "parameters", emptyParams: `{"type":"object","properties":{}}`, strict: strictAlways}
	geminiTool    = toolShape{params: "parametersJsonSchema", gemini: true}
)

// functionTool writes the members of function tool t (name, description,
// schema, strict) into the open object. A custom (freeform) tool is
// written in its function shape (ToolDef.functionShape).
func (w *writer) functionTool(t *ToolDef, s *toolShape) {
	desc, params := t.Desc, t.Params
	if t.Custom {
		desc, params = t.functionShape()
	}
	w.kstr("name", t.Name)
	if desc != "" {
		w.kstr("description", desc)
	}
	switch {
	case params == "" && s.emptyParams != "":
		w.kraw(s.params, s.emptyParams)
	case params == "":
	case s.gemini:
		w.key(s.params)
		appendSchema(w, gjson.Parse(params), schemaToGemini, 0)
	default:
		w.kraw(s.params, params)
	}
	switch {
	case s.strict == strictAlways, s.strict == strictWhenSet && t.Strict != TriUnset:
		w.key("strict")
		w.bool(t.Strict == TriTrue)
	case s.strict == strictWhenTrue && t.Strict == TriTrue:
		w.key("strict")
		w.bool(true)
	}
}
