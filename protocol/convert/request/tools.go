package request

import "github.com/tidwall/gjson"

// toolShape is how one upstream family writes its tools and the choice
// among them. Every encoder offers tools through offerTools with its
// shape, so a tool is offered alike everywhere (a custom tool in its
// function shape where the family has none, the description only when
// there is one, the hosted search tool first).
type toolShape struct {
	params      string // the schema's key
	emptyParams string // written when the tool has no schema; "" leaves the key out
	gemini      bool   // the schema is rewritten for Gemini (schemaToGemini)
	strict      strictRule
	list        toolList
	search      string // the family's hosted web search tool; "" for none
}

// strictRule says when a family's tool carries "strict".
type strictRule uint8

const (
	strictNever    strictRule = iota // no such member (Gemini)
	strictWhenTrue                   // only strict: true (Anthropic)
	strictWhenSet                    // as the client set it (Chat)
	strictAlways                     // always, false unless asked (Responses: its default is true)
)

// toolList says how a family lists its tools and names the chosen one.
type toolList uint8

const (
	listAnthropic toolList = iota // [{name, …}]; tool_choice {type, name, disable_parallel_tool_use}
	listChat                      // [{"type":"function","function":{name, …}}]; tool_choice {"type":"function","function":{name}}
	listResponses                 // [{"type":"function", name, …} or {"type":"custom", …}]; tool_choice {type, name}
	listGemini                    // [{"functionDeclarations":[{name, …}]}]; toolConfig.functionCallingConfig
)

var (
	anthropicTool = toolShape{params: "input_schema", emptyParams: `{"type":"object","properties":{}}`, strict: strictWhenTrue,
		list: listAnthropic, search: `{"type":"web_search_20250305","name":"web_search"}`}
	chatTool      = toolShape{params: "parameters", strict: strictWhenSet, list: listChat}
	responsesTool = toolShape{params: "parameters", emptyParams: `{"type":"object","properties":{}}`, strict: strictAlways,
		list: listResponses, search: `{"type":"web_search"}`}
	geminiTool = toolShape{params: "parametersJsonSchema", gemini: true, list: listGemini, search: `{"googleSearch":{}}`}
)

// offerTools writes what a request offers of tools: the tools member and
// how the model may use them (tool choice, parallel calls), in the
// family's shape. Nothing is written when no tool is offered.
func (w *writer) offerTools(r *Req, s *toolShape) {
	w.toolsMember(r, s)
	switch s.list {
	case listAnthropic:
		if len(r.Tools) > 0 || r.Search {
			w.anthropicToolChoice(r)
		}
	case listChat, listResponses:
		if len(r.Tools) > 0 {
			w.openAIToolChoice(r, s)
			w.ktri("parallel_tool_calls", r.Parallel)
		}
	case listGemini:
		if len(r.Tools) > 0 {
			w.geminiToolConfig(r)
		}
	}
}

// toolsMember writes the tools member: the hosted search tool when the
// request asks for it and the family has one, then every tool.
func (w *writer) toolsMember(r *Req, s *toolShape) {
	search := r.Search && s.search != ""
	if len(r.Tools) == 0 && !search {
		return
	}
	w.key("tools")
	w.arr()
	if search {
		w.raw(s.search)
	}
	if len(r.Tools) > 0 {
		if s.list == listGemini {
			w.obj()
			w.key("functionDeclarations")
			w.arr()
		}
		for i := range r.Tools {
			w.tool(&r.Tools[i], s)
		}
		if s.list == listGemini {
			w.endArr()
			w.endObj()
		}
	}
	w.endArr()
}

// tool writes one tool as an element of the tools list.
func (w *writer) tool(t *ToolDef, s *toolShape) {
	w.obj()
	switch {
	case s.list == listChat:
		// A custom (freeform) tool is offered in its function shape even
		// though OpenAI's Chat API has custom tools: most servers behind
		// the openai family (vLLM, DeepSeek, relays) do not, and the shape
		// of a streamed custom call is not documented, while a function
		// call comes back the same way everywhere and is turned back into
		// the client's custom call (clientToolsOf).
		w.kstr("type", "function")
		w.key("function")
		w.obj()
		w.functionTool(t, s)
		w.endObj()
	case s.list == listResponses && t.Custom:
		w.kstr("type", "custom")
		w.kstr("name", t.Name)
		if t.Desc != "" {
			w.kstr("description", t.Desc)
		}
		if t.Format != "" {
			w.kraw("format", t.Format)
		}
	case s.list == listResponses:
		// Responses defaults strict to true, which rejects most schemas
		// written for the other families: it is always written
		// (strictAlways).
		w.kstr("type", "function")
		w.functionTool(t, s)
	default:
		w.functionTool(t, s)
	}
	w.endObj()
}

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
	switch s.strict {
	case strictAlways:
		w.kbool("strict", t.Strict == TriTrue)
	case strictWhenSet:
		w.ktri("strict", t.Strict)
	case strictWhenTrue:
		if t.Strict == TriTrue {
			w.kbool("strict", true)
		}
	}
}

// openAIModes are the tool_choice strings of Chat and Responses.
var openAIModes = [...]string{ChoiceAuto: "auto", ChoiceNone: "none", ChoiceRequired: "required"}

// openAIToolChoice writes tool_choice for Chat and Responses: a mode
// string, or an object naming the one tool (a custom one as such on
// Responses).
func (w *writer) openAIToolChoice(r *Req, s *toolShape) {
	switch mode := r.ToolChoice.Mode; mode {
	case ChoiceUnset:
	case ChoiceTool:
		w.key("tool_choice")
		w.obj()
		if s.list == listChat {
			w.kstr("type", "function")
			w.key("function")
			w.obj()
			w.kstr("name", r.ToolChoice.Name)
			w.endObj()
		} else {
			if r.customTools()[r.ToolChoice.Name] {
				w.kstr("type", "custom")
			} else {
				w.kstr("type", "function")
			}
			w.kstr("name", r.ToolChoice.Name)
		}
		w.endObj()
	default:
		w.kstr("tool_choice", openAIModes[mode])
	}
}

// anthropicModes are Anthropic's tool_choice types.
var anthropicModes = [...]string{ChoiceUnset: "auto", ChoiceAuto: "auto", ChoiceNone: "none", ChoiceRequired: "any", ChoiceTool: "tool"}

// anthropicToolChoice writes tool_choice, which on Anthropic also says
// whether calls may run in parallel: it is written for either.
func (w *writer) anthropicToolChoice(r *Req) {
	mode := r.ToolChoice.Mode
	if mode == ChoiceUnset && r.Parallel != TriFalse {
		return
	}
	w.key("tool_choice")
	w.obj()
	w.kstr("type", anthropicModes[mode])
	if mode == ChoiceTool {
		w.kstr("name", r.ToolChoice.Name)
	}
	if r.Parallel == TriFalse && mode != ChoiceNone {
		w.kbool("disable_parallel_tool_use", true)
	}
	w.endObj()
}

// geminiModes are Gemini's function calling modes; one named tool is ANY
// restricted to it.
var geminiModes = [...]string{ChoiceAuto: "AUTO", ChoiceNone: "NONE", ChoiceRequired: "ANY", ChoiceTool: "ANY"}

// geminiToolConfig writes toolConfig.functionCallingConfig.
func (w *writer) geminiToolConfig(r *Req) {
	mode := r.ToolChoice.Mode
	if mode == ChoiceUnset {
		return
	}
	w.key("toolConfig")
	w.obj()
	w.key("functionCallingConfig")
	w.obj()
	w.kstr("mode", geminiModes[mode])
	if mode == ChoiceTool {
		w.kstrs("allowedFunctionNames", []string{r.ToolChoice.Name})
	}
	w.endObj()
	w.endObj()
}
