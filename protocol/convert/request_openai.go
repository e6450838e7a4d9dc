package convert

import (
	"strings"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/jsonwalk"

	"github.com/tidwall/gjson"
)

// rqDecodeOpenAI reads a Chat Completions request.
func rqDecodeOpenAI(r *Req, body []byte, to protocol.Family) error {
	root := parseBody(body)
	c := rqCapsOf[to]
	var err error
	var msgs gjson.Result
	forEach(root, func(k, v gjson.Result) bool {
		switch k.Str {
		case "model", "stream", "stream_options":
			// the engine owns model, stream and usage reporting
		case "messages": // read below
			if !msgs.Exists() { // the first of duplicate keys, as Get reads it
				msgs = v
			}
		case "max_tokens", "max_completion_tokens":
			r.MaxTokens, err = reqInt(v, k.Str)
		case "temperature":
			r.Temperature, err = reqNumber(v, "temperature")
		case "top_p":
			r.TopP, err = reqNumber(v, "top_p")
		case "seed":
			r.Seed, err = reqNumber(v, "seed")
		case "presence_penalty", "frequency_penalty":
			if reqZero(v) {
				break
			}
			if !c.penalties {
				// A sampling preference, like top_k (doc.go).
				r.note("%s dropped: %s upstreams have no penalties", k.Str, to)
				break
			}
			if k.Str == "presence_penalty" {
				r.Presence, err = reqNumber(v, k.Str)
			} else {
				r.Frequency, err = reqNumber(v, k.Str)
			}
		case "stop":
			r.Stop, err = reqStrings(v, "stop")
			if err == nil && len(r.Stop) > 0 && !c.stop {
				err = rqRefuseField(to, "stop")
			}
		case "n":
			if v.Type != gjson.Null && v.Int() != 1 {
				err = rqRefuseField(to, "n (more than one choice)")
			}
		case "logprobs", "top_logprobs":
			if !reqZero(v) {
				err = rqRefuseField(to, "%s", k.Str)
			}
		case "logit_bias":
			if v.IsObject() && len(v.Map()) > 0 {
				err = rqRefuseField(to, "logit_bias")
			}
		case "modalities":
			if v.IsArray() && (len(v.Array()) != 1 || v.Array()[0].Str != "text") {
				err = rqRefuseField(to, "modalities (other than [\"text\"])")
			}
		case "tools":
			err = rqChatTools(r, v, to)
		case "tool_choice":
			err = rqChatToolChoice(r, v, to)
		case "parallel_tool_calls":
			if v.Type == gjson.False && !c.noParallel {
				// A preference: the client handles several calls anyway.
				r.note("parallel_tool_calls: false dropped: %s upstreams cannot forbid parallel calls", to)
			} else if v.Type == gjson.True || v.Type == gjson.False {
				r.Parallel = rqTriOf(v.Bool())
			}
		case "response_format":
			err = rqChatResponseFormat(r, v, "response_format", to)
		case "reasoning_effort":
			if v.Type != gjson.Null {
				r.Reasoning.Effort = v.Str
				err = rqCheckEffort(v.Str, "reasoning_effort")
			}
		case "verbosity":
			r.Verbosity = v.Str
		case "user", "metadata", "store", "service_tier", "prompt_cache_key", "prompt_cache_retention", "safety_identifier", "prediction":
			// hints: see doc.go
		default:
			err = rqRefuseField(to, "field %q", k.Str)
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	if !msgs.IsArray() {
		return rqBadRequest("messages: want an array")
	}
	for i, m := range elements(msgs) {
		if err := rqChatMessage(r, m, i, to); err != nil {
			return err
		}
	}
	return nil
}

func rqChatTools(r *Req, v gjson.Result, to protocol.Family) error {
	if !v.IsArray() {
		return rqBadRequest("tools: want an array")
	}
	for i, t := range elements(v) {
		var tm [3]gjson.Result // a Get finds where a value ends a byte at a time
		pick(t, []string{"type", "function", "custom"}, tm[:])
		switch typ := tm[0].Str; typ {
		case "function":
			var m [4]gjson.Result
			pick(tm[1], []string{"name", "description", "parameters", "strict"}, m[:])
			d := ToolDef{Name: m[0].Str, Desc: m[1].Str}
			if p := m[2]; p.Exists() && p.Type != gjson.Null {
				d.Params = p.Raw
			}
			if s := m[3]; s.Type == gjson.True || s.Type == gjson.False {
				d.Strict = rqTriOf(s.Bool())
			}
			r.Tools = append(r.Tools, d)
		case "custom":
			cu := tm[2]
			d := ToolDef{Name: cu.Get("name").Str, Desc: cu.Get("description").Str, Custom: true}
			// Chat nests the grammar; the canonical form is the Responses one.
			if f := cu.Get("format"); f.Get("type").Str == "grammar" {
				g := f.Get("grammar")
				w := rqNewJSON(len(g.Raw) + 32)
				w.obj()
				w.kstr("type", "grammar")
				w.kstr("syntax", g.Get("syntax").Str)
				w.kstr("definition", g.Get("definition").Str)
				w.endObj()
				d.Format = string(w.b)
			}
			r.Tools = append(r.Tools, d)
		default:
			return rqRefuseField(to, "tools[%d] (type %q)", i, typ)
		}
	}
	return nil
}

func rqChatToolChoice(r *Req, v gjson.Result, to protocol.Family) error {
	if v.Type == gjson.String {
		switch v.Str {
		case "auto":
			r.ToolChoice.Mode = ChoiceAuto
		case "none":
			r.ToolChoice.Mode = ChoiceNone
		case "required":
			r.ToolChoice.Mode = ChoiceRequired
		default:
			return rqBadRequest("tool_choice: unknown %q", v.Str)
		}
		return nil
	}
	switch typ := v.Get("type").Str; typ {
	case "function":
		r.ToolChoice = ToolChoice{Mode: ChoiceTool, Name: v.Get("function.name").Str}
	case "custom":
		r.ToolChoice = ToolChoice{Mode: ChoiceTool, Name: v.Get("custom.name").Str}
	default:
		return rqRefuseField(to, "tool_choice (type %q)", typ)
	}
	return nil
}

// rqChatResponseFormat reads Chat's response_format, whose json_schema shape
// nests the schema; Responses' text.format is flat (see rqRespTextFormat).
func rqChatResponseFormat(r *Req, v gjson.Result, field string, to protocol.Family) error {
	switch typ := v.Get("type").Str; typ {
	case "", "text":
	case "json_object":
		if !rqCapsOf[to].jsonObject {
			return rqRefuseField(to, "%s (type \"json_object\", JSON without a schema)", field)
		}
		r.Format = &OutputFormat{}
	case "json_schema":
		js := v.Get("json_schema")
		if !js.Get("schema").IsObject() {
			return rqBadRequest("%s.json_schema.schema: want an object", field)
		}
		r.Format = &OutputFormat{Schema: js.Get("schema").Raw, Name: js.Get("name").Str, Desc: js.Get("description").Str}
		if s := js.Get("strict"); s.Type == gjson.True || s.Type == gjson.False {
			r.Format.Strict = rqTriOf(s.Bool())
		}
	default:
		return rqBadRequest("%s.type: unknown %q", field, typ)
	}
	return nil
}

func rqChatMessage(r *Req, m gjson.Result, i int, to protocol.Family) error {
	// One walk for the members any role reads (chatMessageMembers).
	var f [len(chatMessageMembers)]gjson.Result
	pick(m, chatMessageMembers[:], f[:])
	content := f[cmContent]
	switch role := f[cmRole].Str; role {
	case "system", "developer":
		texts, err := rqChatTexts(content, at{}.in("messages", i).in(".content", -1))
		if err != nil {
			return err
		}
		for _, t := range texts {
			r.addSystem(t)
		}
		return nil
	case "user":
		parts, err := rqChatUserParts(content, i, to)
		if err != nil {
			return err
		}
		r.addMsg(RoleUser, parts...)
		return nil
	case "assistant":
		return rqChatAssistant(r, &f, i, to)
	case "tool":
		texts, err := rqChatTexts(content, at{}.in("messages", i).in(".content", -1))
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
		return rqRefuseField(to, "messages[%d] (role %q)", i, role)
	}
}

// chatMessageMembers are the members of a message rqChatMessage and
// rqChatAssistant read, in one walk (a Get each walked the message from its
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

// rqChatTexts reads content that may only hold text: a string or text parts.
func rqChatTexts(c gjson.Result, path at) ([]string, error) {
	switch {
	case c.Type == gjson.String:
		return []string{c.Str}, nil
	case c.Type == gjson.Null || !c.Exists():
		return nil, nil
	case c.IsArray():
		var out []string
		for j, p := range elements(c) {
			if t := p.Get("type").Str; t != "text" && t != "refusal" {
				return nil, rqBadRequest("%s[%d]: want a text part, got %q", path, j, t)
			}
			if p.Get("type").Str == "refusal" {
				out = append(out, p.Get("refusal").Str)
			} else {
				out = append(out, p.Get("text").Str)
			}
		}
		return out, nil
	}
	return nil, rqBadRequest("%s: want a string or an array", path)
}

func rqChatUserParts(c gjson.Result, i int, to protocol.Family) ([]Part, error) {
	if c.Type == gjson.String {
		return []Part{{Kind: PartText, Text: c.Str}}, nil
	}
	if !c.IsArray() {
		return nil, rqBadRequest("messages[%d].content: want a string or an array", i)
	}
	caps := rqCapsOf[to]
	var parts []Part
	for j, p := range elements(c) {
		path := at{}.in("messages", i).in(".content", j)
		switch typ := p.Get("type").Str; typ {
		case "text":
			parts = append(parts, Part{Kind: PartText, Text: p.Get("text").Str})
		case "image_url":
			u := p.Get("image_url.url").Str
			if mime, data, ok := reqParseDataURL(u); ok {
				parts = append(parts, Part{Kind: PartImage, MIME: mime, Data: data})
				break
			}
			if !caps.imageURL {
				return nil, rqRefuseField(to, "%s.image_url (an image URL; only inline data)", path)
			}
			parts = append(parts, Part{Kind: PartImage, URL: u})
		case "input_audio":
			if !caps.audio {
				return nil, rqRefuseField(to, "%s (type \"input_audio\")", path)
			}
			format := p.Get("input_audio.format").Str
			parts = append(parts, Part{Kind: PartAudio, MIME: rqAudioMIME(format), Data: p.Get("input_audio.data").Str})
		case "file":
			f := p.Get("file")
			mime, data, ok := reqParseDataURL(f.Get("file_data").Str)
			if !ok {
				return nil, rqRefuseField(to, "%s.file (a file_id or non-inline file)", path)
			}
			parts = append(parts, Part{Kind: PartDocument, MIME: mime, Data: data, Name: f.Get("filename").Str})
		default:
			return nil, rqRefuseField(to, "%s (type %q)", path, typ)
		}
	}
	return parts, nil
}

// rqChatAudioFormat is Chat's input_audio format for a MIME type; Chat takes
// only wav and mp3.
func rqChatAudioFormat(mime string) (string, bool) {
	switch mime {
	case "audio/wav", "audio/x-wav", "audio/wave":
		return "wav", true
	case "audio/mp3", "audio/mpeg":
		return "mp3", true
	}
	return "", false
}

func rqAudioMIME(format string) string {
	if format == "mp3" {
		return "audio/mp3"
	}
	return "audio/" + format
}

func rqChatAssistant(r *Req, f *[len(chatMessageMembers)]gjson.Result, i int, to protocol.Family) error {
	var parts []Part
	if rc := f[cmReasoningContent]; rc.Type == gjson.String && rc.Str != "" {
		parts = append(parts, Part{Kind: PartThinking, Text: rc.Str})
	}
	texts, err := rqChatTexts(f[cmContent], at{}.in("messages", i).in(".content", -1))
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
		return rqRefuseField(to, "messages[%d].audio", i)
	}
	if f[cmFunctionCall].IsObject() {
		return rqRefuseField(to, "messages[%d].function_call", i)
	}
	for j, tc := range elements(f[cmToolCalls]) {
		path := at{}.in("messages", i).in(".tool_calls", j)
		switch typ := tc.Get("type").Str; typ {
		case "function", "":
			args := tc.Get("function.arguments").Str
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			if a := gjson.Parse(args); !jsonwalk.Valid(args) || !a.IsObject() {
				return rqRefuseField(to, "%s.function.arguments (not a JSON object)", path)
			}
			parts = append(parts, Part{Kind: PartToolCall, ID: tc.Get("id").Str, Name: tc.Get("function.name").Str, Args: args})
		case "custom":
			parts = append(parts, Part{Kind: PartToolCall, ID: tc.Get("id").Str, Name: tc.Get("custom.name").Str, Input: tc.Get("custom.input").Str, Custom: true})
		default:
			return rqRefuseField(to, "%s (type %q)", path, typ)
		}
	}
	r.addMsg(RoleAssistant, parts...)
	return nil
}

// rqEncodeOpenAI writes a Chat Completions request.
func rqEncodeOpenAI(r *Req) ([]byte, error) {
	w := rqNewJSON(rqEstimateSize(r))
	w.obj()
	w.kstr("model", r.Model)
	w.key("messages")
	w.arr()
	if len(r.System) > 0 {
		rqChatTextMsg(w, "system", r.System)
	}
	for i := range r.Msgs {
		if err := rqChatEncodeMsg(w, &r.Msgs[i]); err != nil {
			return nil, err
		}
	}
	w.endArr()
	if len(r.Tools) > 0 {
		w.key("tools")
		w.arr()
		for i := range r.Tools {
			rqChatEncodeTool(w, &r.Tools[i])
		}
		w.endArr()
		switch r.ToolChoice.Mode {
		case ChoiceAuto:
			w.kstr("tool_choice", "auto")
		case ChoiceNone:
			w.kstr("tool_choice", "none")
		case ChoiceRequired:
			w.kstr("tool_choice", "required")
		case ChoiceTool:
			w.key("tool_choice")
			w.obj()
			w.kstr("type", "function")
			w.key("function")
			w.obj()
			w.kstr("name", r.ToolChoice.Name)
			w.endObj()
			w.endObj()
		}
		if r.Parallel != TriUnset {
			w.key("parallel_tool_calls")
			w.bool(r.Parallel == TriTrue)
		}
	}
	if r.MaxTokens > 0 {
		w.kint("max_completion_tokens", r.MaxTokens)
	}
	w.kopt("temperature", r.Temperature)
	w.kopt("top_p", r.TopP)
	w.kopt("seed", r.Seed)
	w.kopt("presence_penalty", r.Presence)
	w.kopt("frequency_penalty", r.Frequency)
	if len(r.Stop) > 0 {
		w.key("stop")
		w.arr()
		for _, s := range r.Stop {
			w.str(s)
		}
		w.endArr()
	}
	if e := r.Reasoning.effort(); e != "" {
		w.kstr("reasoning_effort", e)
	}
	if f := r.Format; f != nil {
		w.key("response_format")
		w.obj()
		if f.Schema == "" {
			w.kstr("type", "json_object")
		} else {
			w.kstr("type", "json_schema")
			w.key("json_schema")
			w.obj()
			w.kstr("name", rqFormatName(f))
			if f.Desc != "" {
				w.kstr("description", f.Desc)
			}
			w.kraw("schema", f.Schema)
			if f.Strict != TriUnset {
				w.key("strict")
				w.bool(f.Strict == TriTrue)
			}
			w.endObj()
		}
		w.endObj()
	}
	if r.Verbosity != "" {
		w.kstr("verbosity", r.Verbosity)
	}
	if r.Stream {
		w.key("stream")
		w.bool(true)
		// Always ask for usage: the engine needs it even when the client
		// did not ask (the response converter drops the extra chunk).
		w.kraw("stream_options", `{"include_usage":true}`)
	}
	w.endObj()
	return w.b, nil
}

// rqFormatName is the json_schema name OpenAI requires; Gemini and Anthropic
// have none.
func rqFormatName(f *OutputFormat) string {
	if f.Name != "" {
		return f.Name
	}
	return "response"
}

func rqChatTextMsg(w *reqJSON, role string, texts []string) {
	w.obj()
	w.kstr("role", role)
	if len(texts) == 1 {
		w.kstr("content", texts[0])
	} else {
		w.key("content")
		w.arr()
		for _, t := range texts {
			w.obj()
			w.kstr("type", "text")
			w.kstr("text", t)
			w.endObj()
		}
		w.endArr()
	}
	w.endObj()
}

// rqChatEncodeTool writes a function tool. A custom (freeform) tool is
// offered in its function shape even though OpenAI's Chat API has custom
// tools: most servers behind the openai family (vLLM, DeepSeek, relays)
// do not, and the shape of a streamed custom call is not documented, while
// a function call comes back the same way everywhere and is turned back
// into the client's custom call (clientToolsOf).
func rqChatEncodeTool(w *reqJSON, t *ToolDef) {
	w.obj()
	w.kstr("type", "function")
	w.key("function")
	w.obj()
	w.functionTool(t, &chatTool)
	w.endObj()
	w.endObj()
}

func rqChatEncodeMsg(w *reqJSON, m *Msg) error {
	switch m.Role {
	case RoleSystem:
		texts := make([]string, 0, len(m.Parts))
		for _, p := range m.Parts {
			texts = append(texts, p.Text)
		}
		rqChatTextMsg(w, "system", texts)
	case RoleAssistant:
		rqChatEncodeAssistant(w, m)
	default:
		// Tool results become tool messages, in order; the other parts are
		// grouped into user messages between them.
		start := -1
		for i := range m.Parts {
			p := &m.Parts[i]
			if p.Kind != PartToolResult {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 {
				rqChatUserMsg(w, m.Parts[start:i])
				start = -1
			}
			w.obj()
			w.kstr("role", "tool")
			w.kstr("tool_call_id", p.ID)
			w.kstr("content", rqResultText(p))
			w.endObj()
		}
		if start >= 0 {
			rqChatUserMsg(w, m.Parts[start:])
		}
	}
	return nil
}

// rqResultText flattens a tool result into text for families whose tool
// results are text only; an error result is marked with an "Error: " prefix
// because they have no error flag (doc.go).
func rqResultText(p *Part) string {
	var sb strings.Builder
	if p.IsError {
		sb.WriteString("Error: ")
	}
	for i := range p.Content {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(p.Content[i].Text)
	}
	return sb.String()
}

func rqChatUserMsg(w *reqJSON, parts []Part) {
	w.obj()
	w.kstr("role", "user")
	if len(parts) == 1 && parts[0].Kind == PartText {
		w.kstr("content", parts[0].Text)
		w.endObj()
		return
	}
	w.key("content")
	w.arr()
	for i := range parts {
		p := &parts[i]
		w.obj()
		switch p.Kind {
		case PartText:
			w.kstr("type", "text")
			w.kstr("text", p.Text)
		case PartImage:
			w.kstr("type", "image_url")
			w.key("image_url")
			w.obj()
			if p.URL != "" {
				w.kstr("url", p.URL)
			} else {
				w.kstr("url", reqDataURL(p.MIME, p.Data))
			}
			w.endObj()
		case PartAudio:
			w.kstr("type", "input_audio")
			w.key("input_audio")
			w.obj()
			w.kstr("data", p.Data)
			f, _ := rqChatAudioFormat(p.MIME)
			w.kstr("format", f)
			w.endObj()
		case PartDocument:
			if p.Data == "" {
				w.kstr("type", "text")
				w.kstr("text", rqDocumentText(p))
				break
			}
			w.kstr("type", "file")
			w.key("file")
			w.obj()
			w.kstr("filename", rqDocumentName(p))
			w.kstr("file_data", reqDataURL(p.MIME, p.Data))
			w.endObj()
		}
		w.endObj()
	}
	w.endArr()
	w.endObj()
}

// rqDocumentText renders a plain-text document as text for families without
// text documents, keeping its title.
func rqDocumentText(p *Part) string {
	if p.Name == "" {
		return p.Text
	}
	return "[document: " + p.Name + "]\n" + p.Text
}

// rqDocumentName is the file name OpenAI wants with inline file data.
func rqDocumentName(p *Part) string {
	if p.Name != "" {
		return p.Name
	}
	if p.MIME == "application/pdf" {
		return "document.pdf"
	}
	return "document"
}

func rqChatEncodeAssistant(w *reqJSON, m *Msg) {
	var texts []string
	calls := 0
	for i := range m.Parts {
		switch p := &m.Parts[i]; p.Kind {
		case PartText:
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		case PartToolCall:
			calls++
		}
	}
	if len(texts) == 0 && calls == 0 {
		return // only reasoning, which Chat cannot take back (doc.go)
	}
	w.obj()
	w.kstr("role", "assistant")
	switch len(texts) {
	case 0:
		w.kraw("content", "null")
	case 1:
		w.kstr("content", texts[0])
	default:
		w.kstr("content", strings.Join(texts, "\n\n"))
	}
	if calls > 0 {
		w.key("tool_calls")
		w.arr()
		for i := range m.Parts {
			p := &m.Parts[i]
			if p.Kind != PartToolCall {
				continue
			}
			w.obj()
			w.kstr("id", p.ID)
			// A custom tool call in its function shape (rqChatEncodeTool).
			w.kstr("type", "function")
			w.key("function")
			w.obj()
			w.kstr("name", p.Name)
			w.kstr("arguments", p.callArgs())
			w.endObj()
			w.endObj()
		}
		w.endArr()
	}
	w.endObj()
}
