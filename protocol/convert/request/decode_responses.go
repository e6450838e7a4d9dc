package request

import (
	"fmt"
	"strings"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert/internal/gjwalk"
	"github.com/ccload/ccload/protocol/jsonwalk"

	"github.com/tidwall/gjson"
)

// decodeResponses reads a Responses API request, including Codex's shapes
// (additional_tools items, custom tool calls, reasoning items).
func decodeResponses(r *Req, body []byte, to protocol.Family) error {
	root := gjwalk.Parse(body)
	c := capsOf[to]
	var err error
	var input gjson.Result
	gjwalk.ForEach(root, func(k, v gjson.Result) bool {
		switch k.Str {
		case "model", "stream", "stream_options":
			// the engine owns model and stream
		case "input": // read below
			if !input.Exists() { // the first of duplicate keys, as Get reads it
				input = v
			}
		case "instructions":
			switch v.Type {
			case gjson.String:
				if v.Str != "" {
					r.System = append(r.System, v.Str)
				}
			case gjson.Null:
			default:
				err = badRequest("instructions: want a string")
			}
		case "max_output_tokens":
			r.MaxTokens, err = integer(v, "max_output_tokens")
		case "temperature":
			r.Temperature, err = number(v, "temperature")
		case "top_p":
			r.TopP, err = number(v, "top_p")
		case "tools":
			if !v.IsArray() {
				err = badRequest("tools: want an array")
				break
			}
			err = respTools(r, v, "tools", to)
		case "tool_choice":
			err = respToolChoice(r, v, to)
		case "parallel_tool_calls":
			if v.Type == gjson.False && !c.noParallel {
				// A preference: the client handles several calls anyway.
				r.note("parallel_tool_calls: false dropped: %s upstreams cannot forbid parallel calls", to)
			} else if v.Type == gjson.True || v.Type == gjson.False {
				r.Parallel = triOf(v.Bool())
			}
		case "reasoning":
			err = respReasoning(r, v, to)
		case "text":
			err = respText(r, v, to)
		case "store", "include", "prompt_cache_key", "prompt_cache_retention", "client_metadata", "metadata", "user", "safety_identifier", "service_tier", "truncation":
			// hints: see doc.go
		case "background", "max_tool_calls", "top_logprobs":
			if !isZero(v) {
				err = refuseField(to, "%s", k.Str)
			}
		case "previous_response_id", "conversation", "prompt", "context_management":
			if v.Type != gjson.Null && !(v.IsArray() && len(v.Array()) == 0) {
				err = refuseField(to, "%s (state kept by the upstream)", k.Str)
			}
		default:
			err = refuseField(to, "field %q", k.Str)
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	switch {
	case input.Type == gjson.String:
		r.addMsg(RoleUser, Part{Kind: PartText, Text: input.Str})
	case input.IsArray():
		for i, it := range gjwalk.Elements(input) {
			if err := respItem(r, it, i, to); err != nil {
				return err
			}
		}
	default:
		return badRequest("input: want a string or an array")
	}
	return nil
}

// respTools reads tools (of the tools field or of an additional_tools
// item). Namespaced tools become functions named FlatToolName(namespace,
// name); hosted tools go through hostedSearch or are left out with a note
// (they run on OpenAI's side: no other upstream can run them, and the
// client sees the answer without them).
func respTools(r *Req, v gjson.Result, path string, to protocol.Family) error {
	return respToolList(r, v, path, "", "", to)
}

func respToolList(r *Req, v gjson.Result, path, ns, nsDesc string, to protocol.Family) error {
	for i, t := range gjwalk.Elements(v) {
		switch typ := t.Get("type").Str; typ {
		case "namespace":
			p := fmt.Sprintf("%s[%d]", path, i)
			if ns != "" {
				return badRequest("%s: a namespace inside namespace %q", p, ns)
			}
			name := t.Get("name").Str
			if name == "" {
				return badRequest("%s.name: missing", p)
			}
			if err := respToolList(r, t.Get("tools"), p+".tools", name, t.Get("description").Str, to); err != nil {
				return err
			}
		case "function":
			var m [4]gjson.Result
			gjwalk.Pick(t, []string{"name", "description", "parameters", "strict"}, m[:])
			d := ToolDef{Name: m[0].Str, Desc: m[1].Str}
			if p := m[2]; p.Exists() && p.Type != gjson.Null {
				d.Params = p.Raw
			}
			if s := m[3]; s.Type == gjson.True || s.Type == gjson.False {
				d.Strict = triOf(s.Bool())
			}
			r.Tools = append(r.Tools, namespaced(d, ns, nsDesc))
		case "custom":
			d := ToolDef{Name: t.Get("name").Str, Desc: t.Get("description").Str, Custom: true}
			if f := t.Get("format"); f.IsObject() {
				d.Format = f.Raw
			}
			r.Tools = append(r.Tools, namespaced(d, ns, nsDesc))
		case "web_search", "web_search_preview", "web_search_2025_08_26", "web_search_preview_2025_03_11":
			r.hostedSearch(to, fmt.Sprintf("%s[%d] (type %q)", path, i, typ))
		default:
			r.note("%s[%d] (type %q) left out: a tool hosted by OpenAI", path, i, typ)
		}
	}
	return nil
}

// namespaced gives a tool of namespace ns its flattened name; the
// namespace's description, which the model would have seen once, goes in
// front of the tool's own.
func namespaced(d ToolDef, ns, nsDesc string) ToolDef {
	if ns == "" {
		return d
	}
	d.Name = FlatToolName(ns, d.Name)
	if nsDesc != "" {
		if d.Desc != "" {
			d.Desc = nsDesc + "\n\n" + d.Desc
		} else {
			d.Desc = nsDesc
		}
	}
	return d
}

func respToolChoice(r *Req, v gjson.Result, to protocol.Family) error {
	if v.Type == gjson.String {
		return openAIChoiceMode(r, v.Str)
	}
	switch typ := v.Get("type").Str; typ {
	case "function", "custom":
		name := v.Get("name").Str
		if ns := v.Get("namespace").Str; ns != "" {
			name = FlatToolName(ns, name)
		}
		r.ToolChoice = ToolChoice{Mode: ChoiceTool, Name: name}
	case "allowed_tools", "mcp":
		return refuseField(to, "tool_choice (type %q)", typ)
	default:
		// A hosted tool: it is left out (respTools), so the choice falls
		// back to the target's default.
		r.note("tool_choice (type %q) dropped with the hosted tool", typ)
	}
	return nil
}

func respReasoning(r *Req, v gjson.Result, to protocol.Family) error {
	var err error
	gjwalk.ForEach(v, func(k, f gjson.Result) bool {
		switch k.Str {
		case "effort":
			if f.Type != gjson.Null {
				r.Reasoning.Effort = f.Str
				err = checkEffort(f.Str, "reasoning.effort")
			}
		case "summary", "generate_summary":
			if f.Type == gjson.String && f.Str != "none" {
				r.Reasoning.Summary = f.Str
			}
		case "context":
			// which turns' reasoning to keep: a hint (doc.go)
		default:
			if f.Type != gjson.Null {
				err = refuseField(to, "reasoning.%s", k.Str)
			}
		}
		return err == nil
	})
	return err
}

func respText(r *Req, v gjson.Result, to protocol.Family) error {
	var err error
	gjwalk.ForEach(v, func(k, f gjson.Result) bool {
		switch k.Str {
		case "verbosity":
			r.Verbosity = f.Str
			if f.Str != "" && to != protocol.OpenAI {
				r.note("text.verbosity dropped: %s upstreams have no such setting", to)
			}
		case "format":
			err = respTextFormat(r, f, to)
		default:
			err = refuseField(to, "text.%s", k.Str)
		}
		return err == nil
	})
	return err
}

func respTextFormat(r *Req, f gjson.Result, to protocol.Family) error {
	switch typ := f.Get("type").Str; typ {
	case "", "text":
	case "json_object":
		if !capsOf[to].jsonObject {
			return refuseField(to, "text.format (type \"json_object\", JSON without a schema)")
		}
		r.Format = &OutputFormat{}
	case "json_schema":
		if !f.Get("schema").IsObject() {
			return badRequest("text.format.schema: want an object")
		}
		r.Format = &OutputFormat{Schema: f.Get("schema").Raw, Name: f.Get("name").Str, Desc: f.Get("description").Str}
		if s := f.Get("strict"); s.Type == gjson.True || s.Type == gjson.False {
			r.Format.Strict = triOf(s.Bool())
		}
	default:
		return badRequest("text.format.type: unknown %q", typ)
	}
	return nil
}

// respItemMembers are the members of an input item respItem reads, in
// one walk (a Get each walked the item from its start, past a call's
// arguments or an output to reach what follows), indexed by the ri
// constants.
var respItemMembers = [...]string{"type", "role", "call_id", "name", "namespace", "input", "arguments", "output", "summary", "content", "id", "encrypted_content", "tools"}

const (
	riType = iota
	riRole
	riCallID
	riName
	riNamespace
	riInput
	riArguments
	riOutput
	riSummary
	riContent
	riID
	riEncryptedContent
	riTools
)

func respItem(r *Req, it gjson.Result, i int, to protocol.Family) error {
	var m [len(respItemMembers)]gjson.Result
	gjwalk.Pick(it, respItemMembers[:], m[:])
	typ := m[riType].Str
	if typ == "" && m[riRole].Exists() {
		typ = "message"
	}
	path := at{}.in("input", i)
	switch typ {
	case "message":
		return respMessage(r, m[riContent], m[riRole].Str, path, to)
	case "function_call", "custom_tool_call":
		p := Part{Kind: PartToolCall, ID: m[riCallID].Str, Name: m[riName].Str}
		if ns := m[riNamespace].Str; ns != "" {
			p.Name = FlatToolName(ns, p.Name)
		}
		if typ == "custom_tool_call" {
			p.Custom, p.Input = true, m[riInput].Str
		} else {
			args := m[riArguments].Str
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			if !jsonwalk.Valid(args) || !gjson.Parse(args).IsObject() {
				return refuseField(to, "%s.arguments (not a JSON object)", path)
			}
			p.Args = args
		}
		r.addMsg(RoleAssistant, p)
		return nil
	case "function_call_output", "custom_tool_call_output":
		p := Part{Kind: PartToolResult, ID: m[riCallID].Str}
		out := m[riOutput]
		if out.Type == gjson.String {
			p.Content = []Part{{Kind: PartText, Text: out.Str}}
		} else if out.IsArray() {
			parts, err := respParts(out, path.in(".output", -1), to, true)
			if err != nil {
				return err
			}
			p.Content = parts
		} else {
			return badRequest("%s.output: want a string or an array", path)
		}
		r.addMsg(RoleUser, p)
		return nil
	case "reasoning":
		var texts []string
		for _, s := range gjwalk.Elements(m[riSummary]) {
			texts = append(texts, s.Get("text").Str)
		}
		if len(texts) == 0 {
			for _, s := range gjwalk.Elements(m[riContent]) {
				texts = append(texts, s.Get("text").Str)
			}
		}
		r.addMsg(RoleAssistant, Part{Kind: PartThinking, ID: m[riID].Str, Text: strings.Join(texts, "\n\n"), Sig: m[riEncryptedContent].Str})
		return nil
	case "web_search_call":
		// The record of a hosted search an OpenAI upstream ran; what it
		// found is in the answer that follows.
		r.note("%s (type %q) left out", path, typ)
		return nil
	case "additional_tools":
		// Codex "code mode" offers its tools in an input item rather than in
		// the tools field; they are tools like any other.
		return respTools(r, m[riTools], path.String()+".tools", to)
	}
	return refuseField(to, "%s (type %q)", path, typ)
}

func respMessage(r *Req, content gjson.Result, role string, path at, to protocol.Family) error {
	var parts []Part
	if content.Type == gjson.String {
		parts = []Part{{Kind: PartText, Text: content.Str}}
	} else if content.IsArray() {
		var err error
		if parts, err = respParts(content, path.in(".content", -1), to, false); err != nil {
			return err
		}
	} else {
		return badRequest("%s.content: want a string or an array", path)
	}
	switch role {
	case "system", "developer":
		for _, p := range parts {
			if p.Kind != PartText {
				return badRequest("%s: a %s message holds text", path, role)
			}
			r.addSystem(p.Text)
		}
	case "user":
		r.addMsg(RoleUser, parts...)
	case "assistant":
		r.addMsg(RoleAssistant, parts...)
	default:
		return badRequest("%s.role: unknown %q", path, role)
	}
	return nil
}

// respParts reads message content parts or a tool output array.
func respParts(c gjson.Result, path at, to protocol.Family, inResult bool) ([]Part, error) {
	caps := capsOf[to]
	var parts []Part
	for j, p := range gjwalk.Elements(c) {
		pp := path.in("", j)
		typ := p.Get("type").Str
		if inResult && (typ == "input_image" || typ == "input_file") && !caps.resultMedia {
			return nil, refuseField(to, "%s (type %q in a tool output)", pp, typ)
		}
		switch typ {
		case "input_text", "output_text", "text":
			parts = append(parts, Part{Kind: PartText, Text: p.Get("text").Str})
		case "refusal":
			parts = append(parts, Part{Kind: PartText, Text: p.Get("refusal").Str})
		case "input_image":
			if p.Get("file_id").Str != "" {
				return nil, refuseField(to, "%s.file_id", pp)
			}
			u := p.Get("image_url").Str
			if mime, data, ok := parseDataURL(u); ok {
				parts = append(parts, Part{Kind: PartImage, MIME: mime, Data: data})
				break
			}
			if !caps.imageURL {
				return nil, refuseField(to, "%s.image_url (an image URL; only inline data)", pp)
			}
			parts = append(parts, Part{Kind: PartImage, URL: u})
		case "input_file":
			if p.Get("file_id").Str != "" {
				return nil, refuseField(to, "%s.file_id", pp)
			}
			if u := p.Get("file_url").Str; u != "" {
				if !caps.docURL {
					return nil, refuseField(to, "%s.file_url", pp)
				}
				parts = append(parts, Part{Kind: PartDocument, URL: u, Name: p.Get("filename").Str})
				break
			}
			mime, data, ok := parseDataURL(p.Get("file_data").Str)
			if !ok {
				return nil, badRequest("%s.file_data: want a base64 data URL", pp)
			}
			parts = append(parts, Part{Kind: PartDocument, MIME: mime, Data: data, Name: p.Get("filename").Str})
		default:
			return nil, refuseField(to, "%s (type %q)", pp, typ)
		}
	}
	return parts, nil
}
