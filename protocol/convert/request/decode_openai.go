package request

import (
	"strings"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert/internal/gjwalk"
	"github.com/ccload/ccload/protocol/jsonwalk"

	"github.com/tidwall/gjson"
)

// decodeOpenAI reads a Chat Completions request.
func decodeOpenAI(r *Req, body []byte, to protocol.Family) error {
	root := gjwalk.Parse(body)
	var err error
	var msgs gjson.Result
	gjwalk.ForEach(root, func(k, v gjson.Result) bool {
		if k.Str == "messages" { // read below
			if !msgs.Exists() { // the first of duplicate keys, as Get reads it
				msgs = v
			}
			return true
		}
		err = chatField(r, k.Str, v, to)
		return err == nil
	})
	if err != nil {
		return err
	}
	if !msgs.IsArray() {
		return badRequest("messages: want an array")
	}
	for i, m := range gjwalk.Elements(msgs) {
		if err := chatMessage(r, m, i, to); err != nil {
			return err
		}
	}
	return nil
}

// chatField reads one top-level field of a Chat request other than
// messages: mapped, dropped as a hint, or refused (doc.go).
func chatField(r *Req, key string, v gjson.Result, to protocol.Family) error {
	c := capsOf[to]
	var err error
	switch key {
	case "model", "stream", "stream_options":
		// the engine owns model, stream and usage reporting
	case "max_tokens", "max_completion_tokens":
		r.MaxTokens, err = integer(v, key)
	case "temperature":
		r.Temperature, err = number(v, "temperature")
	case "top_p":
		r.TopP, err = number(v, "top_p")
	case "seed":
		r.Seed, err = number(v, "seed")
	case "presence_penalty", "frequency_penalty":
		err = chatPenalty(r, key, v, to)
	case "stop":
		r.Stop, err = stringList(v, "stop")
		if err == nil && len(r.Stop) > 0 && !c.stop {
			err = refuseField(to, "stop")
		}
	case "n", "logprobs", "top_logprobs", "logit_bias", "modalities":
		err = chatOpenAIOnly(key, v, to)
	case "tools":
		err = chatTools(r, v, to)
	case "tool_choice":
		err = chatToolChoice(r, v, to)
	case "parallel_tool_calls":
		if v.Type == gjson.False && !c.noParallel {
			// A preference: the client handles several calls anyway.
			r.note("parallel_tool_calls: false dropped: %s upstreams cannot forbid parallel calls", to)
		} else if v.Type == gjson.True || v.Type == gjson.False {
			r.Parallel = triOf(v.Bool())
		}
	case "response_format":
		err = chatResponseFormat(r, v, "response_format", to)
	case "reasoning_effort":
		if v.Type != gjson.Null {
			r.Reasoning.Effort = v.Str
			err = checkEffort(v.Str, "reasoning_effort")
		}
	case "verbosity":
		r.Verbosity = v.Str
	case "user", "metadata", "store", "service_tier", "prompt_cache_key", "prompt_cache_retention", "safety_identifier", "prediction":
		// hints: see doc.go
	default:
		err = refuseField(to, "field %q", key)
	}
	return err
}

// chatPenalty reads presence_penalty or frequency_penalty: a sampling
// preference, like top_k, dropped with a note where the target has none.
func chatPenalty(r *Req, key string, v gjson.Result, to protocol.Family) error {
	if isZero(v) {
		return nil
	}
	if !capsOf[to].penalties {
		r.note("%s dropped: %s upstreams have no penalties", key, to)
		return nil
	}
	var err error
	if key == "presence_penalty" {
		r.Presence, err = number(v, key)
	} else {
		r.Frequency, err = number(v, key)
	}
	return err
}

// chatOpenAIOnly refuses, unless they hold the default, the fields no
// other family can honour: several choices, token probabilities, output
// other than text, and logit_bias (a constraint on tokens, doc.go).
func chatOpenAIOnly(key string, v gjson.Result, to protocol.Family) error {
	switch key {
	case "n":
		if v.Type != gjson.Null && v.Int() != 1 {
			return refuseField(to, "n (more than one choice)")
		}
	case "logprobs", "top_logprobs":
		if !isZero(v) {
			return refuseField(to, "%s", key)
		}
	case "logit_bias":
		if v.IsObject() && len(v.Map()) > 0 {
			return refuseField(to, "logit_bias")
		}
	case "modalities":
		if v.IsArray() && (len(v.Array()) != 1 || v.Array()[0].Str != "text") {
			return refuseField(to, "modalities (other than [\"text\"])")
		}
	}
	return nil
}

func chatTools(r *Req, v gjson.Result, to protocol.Family) error {
	if !v.IsArray() {
		return badRequest("tools: want an array")
	}
	for i, t := range gjwalk.Elements(v) {
		var tm [3]gjson.Result // a Get finds where a value ends a byte at a time
		gjwalk.Pick(t, []string{"type", "function", "custom"}, tm[:])
		switch typ := tm[0].Str; typ {
		case "function":
			var m [4]gjson.Result
			gjwalk.Pick(tm[1], []string{"name", "description", "parameters", "strict"}, m[:])
			d := ToolDef{Name: m[0].Str, Desc: m[1].Str}
			if p := m[2]; p.Exists() && p.Type != gjson.Null {
				d.Params = p.Raw
			}
			if s := m[3]; s.Type == gjson.True || s.Type == gjson.False {
				d.Strict = triOf(s.Bool())
			}
			r.Tools = append(r.Tools, d)
		case "custom":
			cu := tm[2]
			d := ToolDef{Name: cu.Get("name").Str, Desc: cu.Get("description").Str, Custom: true}
			// Chat nests the grammar; the canonical form is the Responses one.
			if f := cu.Get("format"); f.Get("type").Str == "grammar" {
				g := f.Get("grammar")
				w := newWriter(len(g.Raw) + 32)
				w.obj()
				w.kstr("type", "grammar")
				w.kstr("syntax", g.Get("syntax").Str)
				w.kstr("definition", g.Get("definition").Str)
				w.endObj()
				d.Format = string(w.b)
			}
			r.Tools = append(r.Tools, d)
		default:
			return refuseField(to, "tools[%d] (type %q)", i, typ)
		}
	}
	return nil
}

// openAIChoiceMode reads the string form of tool_choice, which Chat and
// Responses share.
func openAIChoiceMode(r *Req, mode string) error {
	switch mode {
	case "auto":
		r.ToolChoice.Mode = ChoiceAuto
	case "none":
		r.ToolChoice.Mode = ChoiceNone
	case "required":
		r.ToolChoice.Mode = ChoiceRequired
	default:
		return badRequest("tool_choice: unknown %q", mode)
	}
	return nil
}

func chatToolChoice(r *Req, v gjson.Result, to protocol.Family) error {
	if v.Type == gjson.String {
		return openAIChoiceMode(r, v.Str)
	}
	switch typ := v.Get("type").Str; typ {
	case "function":
		r.ToolChoice = ToolChoice{Mode: ChoiceTool, Name: v.Get("function.name").Str}
	case "custom":
		r.ToolChoice = ToolChoice{Mode: ChoiceTool, Name: v.Get("custom.name").Str}
	default:
		return refuseField(to, "tool_choice (type %q)", typ)
	}
	return nil
}

// chatResponseFormat reads Chat's response_format, whose json_schema shape
// nests the schema; Responses' text.format is flat (see respTextFormat).
func chatResponseFormat(r *Req, v gjson.Result, field string, to protocol.Family) error {
	switch typ := v.Get("type").Str; typ {
	case "", "text":
	case "json_object":
		if !capsOf[to].jsonObject {
			return refuseField(to, "%s (type \"json_object\", JSON without a schema)", field)
		}
		r.Format = &OutputFormat{}
	case "json_schema":
		js := v.Get("json_schema")
		if !js.Get("schema").IsObject() {
			return badRequest("%s.json_schema.schema: want an object", field)
		}
		r.Format = &OutputFormat{Schema: js.Get("schema").Raw, Name: js.Get("name").Str, Desc: js.Get("description").Str}
		if s := js.Get("strict"); s.Type == gjson.True || s.Type == gjson.False {
			r.Format.Strict = triOf(s.Bool())
		}
	default:
		return badRequest("%s.type: unknown %q", field, typ)
	}
	return nil
}

func chatMessage(r *Req, m gjson.Result, i int, to protocol.Family) error {
	// One walk for the members any role reads (chatMessageMembers).
	var f [len(chatMessageMembers)]gjson.Result
	gjwalk.Pick(m, chatMessageMembers[:], f[:])
	content := f[cmContent]
	switch role := f[cmRole].Str; role {
	case "system", "developer":
		texts, err := chatTexts(content, at{}.in("messages", i).in(".content", -1))
		if err != nil {
			return err
		}
		for _, t := range texts {
			r.addSystem(t)
		}
		return nil
	case "user":
		parts, err := chatUserParts(content, i, to)
		if err != nil {
			return err
		}
		r.addMsg(RoleUser, parts...)
		return nil
	case "assistant":
		return chatAssistant(r, &f, i, to)
	case "tool":
		texts, err := chatTexts(content, at{}.in("messages", i).in(".content", -1))
		if err != nil {
			return err
		}
		p := Part{Kind: PartToolResult, ID: f[cmToolCallID].Str}
		for _, t := range texts {
			p.Content = append(p.Content, Part{Kind: PartText, Text: t})
		}
		r.addMsg(RoleUser, p)
		return nil
	default:
		return refuseField(to, "messages[%d] (role %q)", i, role)
	}
}

// chatMessageMembers are the members of a message chatMessage and
// chatAssistant read, in one walk (a Get each walked the message from its
// start, past its content to reach what follows), indexed by the cm
// constants.
var chatMessageMembers = [...]string{"content", "role", "tool_call_id", "reasoning_content", "refusal", "audio", "function_call", "tool_calls"}

const (
	cmContent = iota
	cmRole
	cmToolCallID
	cmReasoningContent
	cmRefusal
	cmAudio
	cmFunctionCall
	cmToolCalls
)

// chatTexts reads content that may only hold text: a string or text parts.
func chatTexts(c gjson.Result, path at) ([]string, error) {
	switch {
	case c.Type == gjson.String:
		return []string{c.Str}, nil
	case c.Type == gjson.Null || !c.Exists():
		return nil, nil
	case c.IsArray():
		var out []string
		for j, p := range gjwalk.Elements(c) {
			if t := p.Get("type").Str; t != "text" && t != "refusal" {
				return nil, badRequest("%s[%d]: want a text part, got %q", path, j, t)
			}
			if p.Get("type").Str == "refusal" {
				out = append(out, p.Get("refusal").Str)
			} else {
				out = append(out, p.Get("text").Str)
			}
		}
		return out, nil
	}
	return nil, badRequest("%s: want a string or an array", path)
}

func chatUserParts(c gjson.Result, i int, to protocol.Family) ([]Part, error) {
	if c.Type == gjson.String {
		return []Part{{Kind: PartText, Text: c.Str}}, nil
	}
	if !c.IsArray() {
		return nil, badRequest("messages[%d].content: want a string or an array", i)
	}
	caps := capsOf[to]
	var parts []Part
	for j, p := range gjwalk.Elements(c) {
		path := at{}.in("messages", i).in(".content", j)
		switch typ := p.Get("type").Str; typ {
		case "text":
			parts = append(parts, Part{Kind: PartText, Text: p.Get("text").Str})
		case "image_url":
			u := p.Get("image_url.url").Str
			if mime, data, ok := parseDataURL(u); ok {
				parts = append(parts, Part{Kind: PartImage, MIME: mime, Data: data})
				break
			}
			if !caps.imageURL {
				return nil, refuseField(to, "%s.image_url (an image URL; only inline data)", path)
			}
			parts = append(parts, Part{Kind: PartImage, URL: u})
		case "input_audio":
			if !caps.audio {
				return nil, refuseField(to, "%s (type \"input_audio\")", path)
			}
			format := p.Get("input_audio.format").Str
			parts = append(parts, Part{Kind: PartAudio, MIME: audioMIME(format), Data: p.Get("input_audio.data").Str})
		case "file":
			f := p.Get("file")
			mime, data, ok := parseDataURL(f.Get("file_data").Str)
			if !ok {
				return nil, refuseField(to, "%s.file (a file_id or non-inline file)", path)
			}
			parts = append(parts, Part{Kind: PartDocument, MIME: mime, Data: data, Name: f.Get("filename").Str})
		default:
			return nil, refuseField(to, "%s (type %q)", path, typ)
		}
	}
	return parts, nil
}

// chatAudioFormat is Chat's input_audio format for a MIME type; Chat takes
// only wav and mp3.
func chatAudioFormat(mime string) (string, bool) {
	switch mime {
	case "audio/wav", "audio/x-wav", "audio/wave":
		return "wav", true
	case "audio/mp3", "audio/mpeg":
		return "mp3", true
	}
	return "", false
}

func audioMIME(format string) string {
	if format == "mp3" {
		return "audio/mp3"
	}
	return "audio/" + format
}

func chatAssistant(r *Req, f *[len(chatMessageMembers)]gjson.Result, i int, to protocol.Family) error {
	var parts []Part
	if rc := f[cmReasoningContent]; rc.Type == gjson.String && rc.Str != "" {
		parts = append(parts, Part{Kind: PartThinking, Text: rc.Str})
	}
	texts, err := chatTexts(f[cmContent], at{}.in("messages", i).in(".content", -1))
	if err != nil {
		return err
	}
	for _, t := range texts {
		parts = append(parts, Part{Kind: PartText, Text: t})
	}
	if rf := f[cmRefusal]; rf.Type == gjson.String && rf.Str != "" {
		parts = append(parts, Part{Kind: PartText, Text: rf.Str})
	}
	if f[cmAudio].IsObject() {
		return refuseField(to, "messages[%d].audio", i)
	}
	if f[cmFunctionCall].IsObject() {
		return refuseField(to, "messages[%d].function_call", i)
	}
	for j, tc := range gjwalk.Elements(f[cmToolCalls]) {
		path := at{}.in("messages", i).in(".tool_calls", j)
		switch typ := tc.Get("type").Str; typ {
		case "function", "":
			args := tc.Get("function.arguments").Str
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			if a := gjson.Parse(args); !jsonwalk.Valid(args) || !a.IsObject() {
				return refuseField(to, "%s.function.arguments (not a JSON object)", path)
			}
			parts = append(parts, Part{Kind: PartToolCall, ID: tc.Get("id").Str, Name: tc.Get("function.name").Str, Args: args})
		case "custom":
			parts = append(parts, Part{Kind: PartToolCall, ID: tc.Get("id").Str, Name: tc.Get("custom.name").Str, Input: tc.Get("custom.input").Str, Custom: true})
		default:
			return refuseField(to, "%s (type %q)", path, typ)
		}
	}
	r.addMsg(RoleAssistant, parts...)
	return nil
}
