package request

import (
	"fmt"
	"strings"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert/internal/gjwalk"

	"github.com/tidwall/gjson"
)

// defaultAnthropicMaxTokens is sent when the client set no output limit:
// Anthropic requires max_tokens, the other families default to the model's
// maximum.
const defaultAnthropicMaxTokens = 32000

// decodeAnthropic reads a Messages API request.
func decodeAnthropic(r *Req, body []byte, to protocol.Family) error {
	root := gjwalk.Parse(body)
	var thinking, outputConfig gjson.Result
	var err error
	var msgs gjson.Result
	gjwalk.ForEach(root, func(k, v gjson.Result) bool {
		switch k.Str {
		case "model", "stream":
			// model and stream come from the engine
		case "messages": // read below
			if !msgs.Exists() { // the first of duplicate keys, as Get reads it
				msgs = v
			}
		case "system":
			err = anthSystem(r, v)
		case "max_tokens":
			r.MaxTokens, err = integer(v, "max_tokens")
		case "temperature":
			r.Temperature, err = number(v, "temperature")
		case "top_p":
			r.TopP, err = number(v, "top_p")
		case "top_k":
			r.TopK, err = number(v, "top_k")
		case "stop_sequences":
			r.Stop, err = stringList(v, "stop_sequences")
			if err == nil && len(r.Stop) > 0 && !capsOf[to].stop {
				err = refuseField(to, "stop_sequences")
			}
		case "tools":
			err = anthTools(r, v, to)
		case "tool_choice":
			err = anthToolChoice(r, v, to)
		case "thinking":
			thinking = v
		case "output_config":
			outputConfig = v
		case "metadata", "service_tier", "cache_control", "inference_geo":
			// hints: see doc.go
		case "context_management":
			if !anthContextNoop(v) {
				err = refuseField(to, "context_management (edits other than clear_thinking keep all)")
			}
		default:
			err = refuseField(to, "field %q", k.Str)
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	if err := anthReasoning(r, thinking, outputConfig, to); err != nil {
		return err
	}
	if !msgs.IsArray() {
		return badRequest("messages: want an array")
	}
	for i, m := range gjwalk.Elements(msgs) {
		if err := anthMessage(r, m, i, to); err != nil {
			return err
		}
	}
	return nil
}

func anthSystem(r *Req, v gjson.Result) error {
	switch {
	case v.Type == gjson.String:
		if v.Str != "" {
			r.System = append(r.System, v.Str)
		}
		return nil
	case v.IsArray():
		for i, b := range gjwalk.Elements(v) {
			if b.Get("type").Str != "text" {
				return badRequest("system[%d]: want a text block", i)
			}
			r.System = append(r.System, b.Get("text").Str)
		}
		return nil
	case v.Type == gjson.Null:
		return nil
	}
	return badRequest("system: want a string or an array of text blocks")
}

// anthContextNoop reports whether context_management only asks to keep all
// thinking, which is what every other family does anyway (Claude Code sends
// exactly that).
func anthContextNoop(v gjson.Result) bool {
	ok := true
	gjwalk.ForEach(v, func(k, e gjson.Result) bool {
		if k.Str != "edits" {
			ok = false
			return false
		}
		gjwalk.ForEach(e, func(_, ed gjson.Result) bool {
			typ := ed.Get("type").Str
			keep := ed.Get("keep")
			if len(typ) < 14 || typ[:14] != "clear_thinking" || keep.String() != "all" {
				ok = false
			}
			return ok
		})
		return ok
	})
	return ok
}

func anthTools(r *Req, v gjson.Result, to protocol.Family) error {
	if !v.IsArray() {
		return badRequest("tools: want an array")
	}
	for i, t := range gjwalk.Elements(v) {
		var m [7]gjson.Result
		gjwalk.Pick(t, []string{"type", "name", "description", "input_schema", "strict", "defer_loading", "input_examples"}, m[:])
		typ, name, desc, schema, strict, deferLoading, examples := m[0].Str, m[1], m[2], m[3], m[4], m[5], m[6]
		if strings.HasPrefix(typ, "web_search_") {
			r.hostedSearch(to, fmt.Sprintf("tools[%d] (type %q)", i, typ))
			continue
		}
		if anthHostedTool(typ) {
			// Run by Anthropic: no other upstream runs them, and the
			// client sees the answer made without them.
			r.note("tools[%d] (type %q) left out: a tool hosted by Anthropic", i, typ)
			continue
		}
		if typ != "" && typ != "custom" {
			return refuseField(to, "tools[%d] (type %q)", i, typ)
		}
		if deferLoading.Bool() {
			return refuseField(to, "tools[%d].defer_loading", i)
		}
		if examples.IsArray() && len(examples.Array()) > 0 {
			return refuseField(to, "tools[%d].input_examples", i)
		}
		d := ToolDef{Name: name.Str, Desc: desc.Str}
		if d.Name == "" {
			return badRequest("tools[%d].name: missing", i)
		}
		if schema.Exists() {
			d.Params = schema.Raw
		}
		if strict.Exists() {
			d.Strict = triOf(strict.Bool())
		}
		r.Tools = append(r.Tools, d)
	}
	return nil
}

// anthHostedTool reports whether an Anthropic tool type is a server tool
// Anthropic runs itself (web fetch, code execution, tool search). Its
// client tools with a fixed schema (bash, text_editor, computer, memory)
// are not: the client runs their calls, and no other model knows their
// contract, so they stay refused.
func anthHostedTool(typ string) bool {
	for _, p := range [...]string{"web_fetch_", "code_execution_", "tool_search_tool_"} {
		if strings.HasPrefix(typ, p) {
			return true
		}
	}
	return false
}

func anthToolChoice(r *Req, v gjson.Result, to protocol.Family) error {
	switch v.Get("type").Str {
	case "auto":
		r.ToolChoice.Mode = ChoiceAuto
	case "any":
		r.ToolChoice.Mode = ChoiceRequired
	case "none":
		r.ToolChoice.Mode = ChoiceNone
	case "tool":
		r.ToolChoice = ToolChoice{Mode: ChoiceTool, Name: v.Get("name").Str}
	default:
		return badRequest("tool_choice.type: unknown %q", v.Get("type").Str)
	}
	if v.Get("disable_parallel_tool_use").Bool() {
		if !capsOf[to].noParallel {
			// A preference: the client handles several calls anyway.
			r.note("tool_choice.disable_parallel_tool_use dropped: %s upstreams cannot forbid parallel calls", to)
			return nil
		}
		r.Parallel = TriFalse
	}
	return nil
}

func anthReasoning(r *Req, thinking, oc gjson.Result, to protocol.Family) error {
	shown := thinking.Get("display").Str != "omitted"
	switch thinking.Get("type").Str {
	case "":
	case "disabled":
		// Anthropic's default; every other family's default is the model's.
	case "enabled":
		b, err := integer(thinking.Get("budget_tokens"), "thinking.budget_tokens")
		if err != nil {
			return err
		}
		r.Reasoning.Budget = b
	case "adaptive":
		r.Reasoning.Adaptive = true
	default:
		return badRequest("thinking.type: unknown %q", thinking.Get("type").Str)
	}
	if r.Reasoning.set() && shown {
		r.Reasoning.Summary = "auto"
	}
	var err error
	gjwalk.ForEach(oc, func(k, v gjson.Result) bool {
		switch k.Str {
		case "effort":
			r.Reasoning.Effort = v.Str
			err = checkEffort(v.Str, "output_config.effort")
		case "format":
			if v.Get("type").Str != "json_schema" {
				err = badRequest("output_config.format.type: unknown %q", v.Get("type").Str)
				break
			}
			if !v.Get("schema").IsObject() {
				err = badRequest("output_config.format.schema: want an object")
				break
			}
			r.Format = &OutputFormat{Schema: v.Get("schema").Raw}
		default:
			err = refuseField(to, "output_config.%s", k.Str)
		}
		return err == nil
	})
	return err
}

func anthMessage(r *Req, m gjson.Result, i int, to protocol.Family) error {
	var role MsgRole
	switch m.Get("role").Str {
	case "user":
		role = RoleUser
	case "assistant":
		role = RoleAssistant
	case "system":
		role = RoleSystem
	default:
		return badRequest("messages[%d].role: unknown %q", i, m.Get("role").Str)
	}
	content := m.Get("content")
	if content.Type == gjson.String {
		if role == RoleSystem {
			r.addSystem(content.Str)
		} else if role == RoleUser {
			r.addUser([]Part{{Kind: PartText, Text: content.Str}})
		} else {
			r.addMsg(role, Part{Kind: PartText, Text: content.Str})
		}
		return nil
	}
	if !content.IsArray() {
		return badRequest("messages[%d].content: want a string or an array", i)
	}
	blocks := content.Array()
	parts := make([]Part, 0, len(blocks))
	for j, b := range blocks {
		path := at{}.in("messages", i).in(".content", j)
		if role == RoleSystem {
			if b.Get("type").Str != "text" {
				return badRequest("%s: a system message holds text blocks", path)
			}
			r.addSystem(b.Get("text").Str)
			continue
		}
		p, err := anthBlock(b, path, to, false)
		if err != nil {
			return err
		}
		parts = append(parts, p)
	}
	if role == RoleUser {
		r.addUser(parts)
	} else {
		r.addMsg(role, parts...)
	}
	return nil
}

// anthBlockMembers are the members anthBlock reads, indexed by the ab
// constants.
var anthBlockMembers = [...]string{"type", "text", "input", "id", "name", "tool_use_id", "is_error", "content", "thinking", "signature", "data"}

const (
	abType = iota
	abText
	abInput
	abID
	abName
	abToolUseID
	abIsError
	abContent
	abThinking
	abSignature
	abData
)

// anthBlock decodes one content block; inResult limits it to what a
// tool_result may hold.
func anthBlock(b gjson.Result, path at, to protocol.Family, inResult bool) (Part, error) {
	// One walk for the members any block type reads: a Get each walked
	// from the block's start, across a tool result's whole content to
	// reach an is_error after it.
	var m [len(anthBlockMembers)]gjson.Result
	gjwalk.Pick(b, anthBlockMembers[:], m[:])
	typ := m[abType].Str
	if inResult && typ != "text" && (typ != "image" && typ != "document" || !capsOf[to].resultMedia) {
		return Part{}, refuseField(to, "%s (type %q in a tool result)", path, typ)
	}
	switch typ {
	case "text":
		return Part{Kind: PartText, Text: m[abText].Str}, nil
	case "image", "document":
		return anthMedia(b, path, typ, to)
	case "tool_use":
		in := m[abInput]
		if in.Exists() && !in.IsObject() {
			return Part{}, badRequest("%s.input: want an object", path)
		}
		return Part{Kind: PartToolCall, ID: m[abID].Str, Name: m[abName].Str, Args: in.Raw}, nil
	case "tool_result":
		p := Part{Kind: PartToolResult, ID: m[abToolUseID].Str, IsError: m[abIsError].Bool()}
		c := m[abContent]
		switch {
		case c.Type == gjson.String:
			p.Content = []Part{{Kind: PartText, Text: c.Str}}
		case c.IsArray():
			for k, cb := range gjwalk.Elements(c) {
				cp, err := anthBlock(cb, path.in(".content", k), to, true)
				if err != nil {
					return Part{}, err
				}
				p.Content = append(p.Content, cp)
			}
		case c.Exists() && c.Type != gjson.Null:
			return Part{}, badRequest("%s.content: want a string or an array", path)
		}
		return p, nil
	case "thinking":
		return Part{Kind: PartThinking, Text: m[abThinking].Str, Sig: m[abSignature].Str}, nil
	case "redacted_thinking":
		return Part{Kind: PartRedacted, Data: m[abData].Str}, nil
	}
	return Part{}, refuseField(to, "%s (type %q)", path, typ)
}

func anthMedia(b gjson.Result, path at, typ string, to protocol.Family) (Part, error) {
	kind := PartImage
	if typ == "document" {
		kind = PartDocument
		if b.Get("citations.enabled").Bool() {
			return Part{}, refuseField(to, "%s.citations", path)
		}
		if b.Get("context").Str != "" {
			return Part{}, refuseField(to, "%s.context", path)
		}
	}
	p := Part{Kind: kind, Name: b.Get("title").Str}
	src := b.Get("source")
	switch st := src.Get("type").Str; st {
	case "base64":
		p.MIME, p.Data = src.Get("media_type").Str, src.Get("data").Str
	case "url":
		p.URL = src.Get("url").Str
		c := capsOf[to]
		if (kind == PartImage && !c.imageURL) || (kind == PartDocument && !c.docURL) {
			return Part{}, refuseField(to, "%s.source (type \"url\")", path)
		}
	case "text":
		if kind != PartDocument {
			return Part{}, badRequest("%s.source: text source on an image", path)
		}
		p.MIME, p.Text = "text/plain", src.Get("data").Str
	default:
		return Part{}, refuseField(to, "%s.source (type %q)", path, st)
	}
	return p, nil
}
