package request

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert/internal/gjwalk"

	"github.com/tidwall/gjson"
)

// skipSignature is Google's documented sentinel for a function call whose
// thought signature was lost (a client family that has no place for it):
// Gemini 3 rejects replayed calls without a signature otherwise.
const skipSignature = "skip_thought_signature_validator"

// decodeGemini reads a generateContent request.
func decodeGemini(r *Req, body []byte, to protocol.Family) error {
	root := gjwalk.Parse(body)
	var err error
	var contents gjson.Result
	gjwalk.ForEach(root, func(k, v gjson.Result) bool {
		switch k.Str {
		case "model":
			// the model is in the path
		case "contents": // read below
			if !contents.Exists() { // the first of duplicate keys, as Get reads it
				contents = v
			}
		case "systemInstruction", "system_instruction":
			for _, p := range gjwalk.Elements(v.Get("parts")) {
				if !p.Get("text").Exists() {
					err = badRequest("systemInstruction.parts: want text parts")
					return false
				}
				r.System = append(r.System, p.Get("text").Str)
			}
		case "generationConfig", "generation_config":
			err = gemGenConfig(r, v, to)
		case "tools":
			err = gemTools(r, v, to)
		case "toolConfig", "tool_config":
			err = gemToolConfig(r, v, to)
		case "safetySettings", "safety_settings", "labels":
			// hints: see doc.go
		default:
			err = refuseField(to, "field %q", k.Str)
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	if !contents.IsArray() {
		return badRequest("contents: want an array")
	}
	d := gemDecoder{r: r, to: to}
	for i, c := range gjwalk.Elements(contents) {
		if err := d.content(c, i); err != nil {
			return err
		}
	}
	return nil
}

func gemGenConfig(r *Req, g gjson.Result, to protocol.Family) error {
	c := capsOf[to]
	var err error
	var mime string
	var schema gjson.Result
	gjwalk.ForEach(g, func(k, v gjson.Result) bool {
		switch k.Str {
		case "maxOutputTokens":
			r.MaxTokens, err = integer(v, "generationConfig.maxOutputTokens")
		case "temperature":
			r.Temperature, err = number(v, "generationConfig.temperature")
		case "topP":
			r.TopP, err = number(v, "generationConfig.topP")
		case "topK":
			r.TopK, err = number(v, "generationConfig.topK")
		case "seed":
			r.Seed, err = number(v, "generationConfig.seed")
		case "presencePenalty", "frequencyPenalty":
			err = gemPenalty(r, k.Str, v, to)
		case "stopSequences":
			r.Stop, err = stringList(v, "generationConfig.stopSequences")
			if err == nil && len(r.Stop) > 0 && !c.stop {
				err = refuseField(to, "generationConfig.stopSequences")
			}
		case "candidateCount":
			if v.Type != gjson.Null && v.Int() != 1 {
				err = refuseField(to, "generationConfig.candidateCount (more than one candidate)")
			}
		case "responseMimeType":
			mime = v.Str
		case "responseJsonSchema", "_responseJsonSchema", "responseSchema":
			schema = v
		case "responseModalities":
			for _, m := range gjwalk.Elements(v) {
				if !strings.EqualFold(m.Str, "TEXT") {
					err = refuseField(to, "generationConfig.responseModalities (%s output)", m.Str)
				}
			}
		case "thinkingConfig":
			err = gemThinking(r, v, to)
		case "mediaResolution":
			// input token budget for media: a hint (doc.go)
		case "responseLogprobs", "logprobs", "enableEnhancedCivicAnswers", "audioTimestamp":
			if !isZero(v) {
				err = refuseField(to, "generationConfig.%s", k.Str)
			}
		default:
			err = refuseField(to, "generationConfig.%s", k.Str)
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	return gemResponseFormat(r, mime, schema, to)
}

// gemPenalty reads presencePenalty or frequencyPenalty: a sampling
// preference, like topK, dropped with a note where the target has none.
func gemPenalty(r *Req, key string, v gjson.Result, to protocol.Family) error {
	if isZero(v) {
		return nil
	}
	if !capsOf[to].penalties {
		r.note("generationConfig.%s dropped: %s upstreams have no penalties", key, to)
		return nil
	}
	var err error
	if key == "presencePenalty" {
		r.Presence, err = number(v, key)
	} else {
		r.Frequency, err = number(v, key)
	}
	return err
}

// gemResponseFormat reads structured output from responseMimeType and the
// response schema (either spelling): JSON with a schema, JSON without one
// where the target has a JSON mode, or free text.
func gemResponseFormat(r *Req, mime string, schema gjson.Result, to protocol.Family) error {
	switch mime {
	case "", "text/plain":
		if schema.Exists() {
			return badRequest("generationConfig: a response schema needs responseMimeType application/json")
		}
	case "application/json":
		if !schema.Exists() {
			if !capsOf[to].jsonObject {
				return refuseField(to, "generationConfig.responseMimeType (JSON without a schema)")
			}
			r.Format = &OutputFormat{}
			break
		}
		if !schema.IsObject() {
			return badRequest("generationConfig: the response schema must be an object")
		}
		r.Format = &OutputFormat{Schema: schemaText(schema, schemaFromGemini)}
	default:
		return refuseField(to, "generationConfig.responseMimeType %q", mime)
	}
	return nil
}

func gemThinking(r *Req, t gjson.Result, to protocol.Family) error {
	var err error
	gjwalk.ForEach(t, func(k, v gjson.Result) bool {
		switch k.Str {
		case "includeThoughts":
			if v.Bool() {
				r.Reasoning.Summary = "auto"
			}
		case "thinkingBudget":
			var b int64
			if b, err = integer(v, "generationConfig.thinkingConfig.thinkingBudget"); err != nil {
				return false
			}
			switch {
			case b == 0:
				r.Reasoning.Effort = "none"
			case b < 0:
				r.Reasoning.Adaptive = true
			default:
				r.Reasoning.Budget = b
			}
		case "thinkingLevel":
			lvl := strings.ToLower(v.Str)
			if lvl != "" && lvl != "thinking_level_unspecified" {
				r.Reasoning.Effort = lvl
				err = checkEffort(lvl, "generationConfig.thinkingConfig.thinkingLevel")
			}
		default:
			err = refuseField(to, "generationConfig.thinkingConfig.%s", k.Str)
		}
		return err == nil
	})
	return err
}

func gemTools(r *Req, v gjson.Result, to protocol.Family) error {
	if !v.IsArray() {
		return badRequest("tools: want an array")
	}
	for i, t := range gjwalk.Elements(v) {
		var err error
		gjwalk.ForEach(t, func(k, decls gjson.Result) bool {
			switch k.Str {
			case "googleSearch", "google_search", "googleSearchRetrieval", "google_search_retrieval":
				r.hostedSearch(to, fmt.Sprintf("tools[%d].%s", i, k.Str))
				return true
			case "codeExecution", "code_execution", "urlContext", "url_context", "googleMaps", "google_maps",
				"fileSearch", "file_search", "retrieval", "enterpriseWebSearch", "enterprise_web_search":
				// Run by Google: no other upstream runs them, and the
				// client sees the answer made without them.
				r.note("tools[%d].%s left out: a tool hosted by Google", i, k.Str)
				return true
			}
			if k.Str != "functionDeclarations" && k.Str != "function_declarations" {
				err = refuseField(to, "tools[%d].%s", i, k.Str)
				return false
			}
			for j, fd := range gjwalk.Elements(decls) {
				var m [6]gjson.Result
				gjwalk.Pick(fd, []string{"name", "description", "parametersJsonSchema", "parameters", "response", "responseJsonSchema"}, m[:])
				d := ToolDef{Name: m[0].Str, Desc: m[1].Str}
				if d.Name == "" {
					err = badRequest("tools[%d].functionDeclarations[%d].name: missing", i, j)
					return false
				}
				if p := m[2]; p.IsObject() {
					d.Params = schemaText(p, schemaFromGemini)
				} else if p := m[3]; p.IsObject() {
					d.Params = schemaText(p, schemaFromGemini)
				}
				if m[4].Exists() || m[5].Exists() {
					err = refuseField(to, "tools[%d].functionDeclarations[%d].response (a declared result schema)", i, j)
					return false
				}
				r.Tools = append(r.Tools, d)
			}
			return true
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func gemToolConfig(r *Req, v gjson.Result, to protocol.Family) error {
	var err error
	gjwalk.ForEach(v, func(k, f gjson.Result) bool {
		if k.Str != "functionCallingConfig" {
			err = refuseField(to, "toolConfig.%s", k.Str)
			return false
		}
		names := f.Get("allowedFunctionNames").Array()
		switch mode := strings.ToUpper(f.Get("mode").Str); mode {
		case "", "AUTO", "VALIDATED":
			r.ToolChoice.Mode = ChoiceAuto
			if len(names) > 0 {
				err = refuseField(to, "toolConfig.functionCallingConfig.allowedFunctionNames with mode %s", mode)
			}
		case "NONE":
			r.ToolChoice.Mode = ChoiceNone
		case "ANY":
			r.ToolChoice.Mode = ChoiceRequired
			switch {
			case len(names) == 1:
				r.ToolChoice = ToolChoice{Mode: ChoiceTool, Name: names[0].Str}
			case len(names) > 1:
				err = refuseField(to, "toolConfig.functionCallingConfig.allowedFunctionNames (more than one)")
			}
		default:
			err = badRequest("toolConfig.functionCallingConfig.mode: unknown %q", mode)
		}
		return err == nil
	})
	return err
}

// gemDecoder reads contents, synthesising tool call ids: Gemini calls have
// none (or an optional one), and a functionResponse is matched to the first
// unanswered call of the same name. Ids depend only on the call's position,
// so the same history yields the same ids on every turn.
type gemDecoder struct {
	r       *Req
	to      protocol.Family
	pending []gemCall
}

type gemCall struct {
	name, id string
	done     bool
}

func gemCallID(name string, i, j int) string {
	b := make([]byte, 0, len(name)+16)
	b = append(b, "call_"...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, '_')
	b = strconv.AppendInt(b, int64(j), 10)
	b = append(b, '_')
	for k := 0; k < len(name); k++ {
		if idChar(name[k]) {
			b = append(b, name[k])
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
}

// gemPartMembers are the members of a content part gemDecoder.content
// reads, indexed by the gp constants.
var gemPartMembers = [...]string{"thoughtSignature", "thought_signature", "thought", "text", "inlineData", "inline_data", "fileData", "file_data", "functionCall", "functionResponse"}

const (
	gpThoughtSignature = iota
	gpThoughtSignatureSnake
	gpThought
	gpText
	gpInlineData
	gpInlineDataSnake
	gpFileData
	gpFileDataSnake
	gpFunctionCall
	gpFunctionResponse
)

// content reads one entry of contents into a turn.
func (d *gemDecoder) content(c gjson.Result, i int) error {
	role := RoleUser
	switch c.Get("role").Str {
	case "", "user", "function":
	case "model":
		role = RoleAssistant
	default:
		return badRequest("contents[%d].role: unknown %q", i, c.Get("role").Str)
	}
	var parts []Part
	for j, p := range gjwalk.Elements(c.Get("parts")) {
		var err error
		if parts, err = d.part(parts, p, i, j); err != nil {
			return err
		}
	}
	if role == RoleUser {
		d.r.addUser(parts)
	} else {
		d.r.addMsg(role, parts...)
	}
	return nil
}

// part appends what part j of content i holds to parts: a thought, or the
// signature it carries (signing the thinking before it) and then its own
// text, media, function call or function response.
func (d *gemDecoder) part(parts []Part, p gjson.Result, i, j int) ([]Part, error) {
	path := at{}.in("contents", i).in(".parts", j)
	// One walk for every member a part may have: a Get each walked the
	// part from its start, across a function response's whole output for
	// each kind tested before it.
	var m [len(gemPartMembers)]gjson.Result
	gjwalk.Pick(p, gemPartMembers[:], m[:])
	sig := m[gpThoughtSignature].Str
	if sig == "" {
		sig = m[gpThoughtSignatureSnake].Str
	}
	if m[gpThought].Bool() {
		return append(parts, Part{Kind: PartThinking, Text: m[gpText].Str, Sig: sig}), nil
	}
	if sig != "" {
		// A signature on an answer part signs the reasoning behind it: the
		// thought parts just before (Gemini's shape), or nothing.
		if n := len(parts); n > 0 && parts[n-1].Kind == PartThinking && parts[n-1].Sig == "" {
			parts[n-1].Sig = sig
		} else {
			parts = append(parts, Part{Kind: PartThinking, Sig: sig})
		}
	}
	var part Part
	var err error
	switch {
	case m[gpText].Exists():
		part = Part{Kind: PartText, Text: m[gpText].Str}
	case m[gpInlineData].Exists() || m[gpInlineDataSnake].Exists():
		part, err = gemBlob(either(m[gpInlineData], m[gpInlineDataSnake]), path.in(".inlineData", -1), d.to)
	case m[gpFileData].Exists() || m[gpFileDataSnake].Exists():
		part, err = gemFileData(either(m[gpFileData], m[gpFileDataSnake]), path, d.to)
	case m[gpFunctionCall].Exists():
		part, err = d.call(m[gpFunctionCall], path, i, j)
	case m[gpFunctionResponse].Exists():
		part, err = d.response(m[gpFunctionResponse], path)
	default:
		if kind, ok := gemPartKind(p); ok {
			return parts, refuseField(d.to, "%s.%s", path, kind)
		}
		return parts, nil // an empty part, or one with only a signature
	}
	if err != nil {
		return parts, err
	}
	return append(parts, part), nil
}

// either is a member spelt in camelCase (a) or, when that is absent, in
// snake_case (b): Gemini's JSON parser takes both.
func either(a, b gjson.Result) gjson.Result {
	if a.Exists() {
		return a
	}
	return b
}

// gemFileData reads a fileData part: media by URL where the target takes
// it; Gemini's uploaded files live in its own storage and are refused.
func gemFileData(fd gjson.Result, path at, to protocol.Family) (Part, error) {
	uri, mime := fd.Get("fileUri").Str, fd.Get("mimeType").Str
	if uri == "" {
		uri = fd.Get("file_uri").Str
	}
	if !strings.HasPrefix(uri, "https://") && !strings.HasPrefix(uri, "http://") || strings.Contains(uri, "generativelanguage.googleapis.com") {
		return Part{}, refuseField(to, "%s.fileData (an uploaded file)", path)
	}
	caps := capsOf[to]
	switch {
	case strings.HasPrefix(mime, "image/") && caps.imageURL:
		return Part{Kind: PartImage, URL: uri}, nil
	case mime == "application/pdf" && caps.docURL:
		return Part{Kind: PartDocument, URL: uri, MIME: mime}, nil
	}
	return Part{}, refuseField(to, "%s.fileData (%s by URL)", path, mime)
}

// call reads a functionCall part of content i, part j. A call without an
// id gets gemCallID's, and is remembered for the response that answers it.
func (d *gemDecoder) call(fc gjson.Result, path at, i, j int) (Part, error) {
	args := fc.Get("args")
	if args.Exists() && !args.IsObject() {
		return Part{}, badRequest("%s.functionCall.args: want an object", path)
	}
	id := fc.Get("id").Str
	if id == "" {
		id = gemCallID(fc.Get("name").Str, i, j)
	}
	d.pending = append(d.pending, gemCall{name: fc.Get("name").Str, id: id})
	return Part{Kind: PartToolCall, ID: id, Name: fc.Get("name").Str, Args: args.Raw}, nil
}

// gemPartKind names the first member of a part this package does not
// read; ok is false when it has none (an empty part, or only a signature
// or metadata).
func gemPartKind(p gjson.Result) (kind string, ok bool) {
	gjwalk.ForEach(p, func(k, _ gjson.Result) bool {
		if k.Str != "thoughtSignature" && k.Str != "partMetadata" {
			kind, ok = k.Str, true
			return false
		}
		return true
	})
	return kind, ok
}

func (d *gemDecoder) response(fr gjson.Result, path at) (Part, error) {
	var m [4]gjson.Result
	gjwalk.Pick(fr, []string{"name", "id", "response", "parts"}, m[:])
	name, id := m[0].Str, m[1].Str
	for k := range d.pending {
		c := &d.pending[k]
		if c.done || (id != "" && c.id != id) || (id == "" && c.name != name) {
			continue
		}
		c.done, id = true, c.id
		break
	}
	if id == "" {
		return Part{}, badRequest("%s.functionResponse: no functionCall named %q to answer", path, name)
	}
	p := Part{Kind: PartToolResult, ID: id, Name: name}
	resp := m[2]
	// One walk for output, error and whether they are the only name
	// there (a Map of the response built a map to count its keys).
	var out, errv gjson.Result
	var first string
	n := 0 // distinct names, up to 2
	if resp.IsObject() {
		gjwalk.ForEach(resp, func(k, v gjson.Result) bool {
			switch {
			case n == 0:
				first, n = k.Str, 1
			case k.Str != first:
				n = 2
			}
			if k.Str == "output" && !out.Exists() {
				out = v
			}
			if k.Str == "error" && !errv.Exists() {
				errv = v
			}
			return true
		})
	}
	hasOut, hasErr := out.Exists(), errv.Exists()
	switch {
	case hasErr && n == 1:
		p.IsError = true
		p.Content = []Part{{Kind: PartText, Text: jsonText(errv)}}
	case hasOut && n == 1:
		p.Content = []Part{{Kind: PartText, Text: jsonText(out)}}
	case resp.Exists():
		p.Content = []Part{{Kind: PartText, Text: resp.Raw}}
	}
	for k, rp := range gjwalk.Elements(m[3]) {
		if !capsOf[d.to].resultMedia {
			return Part{}, refuseField(d.to, "%s.functionResponse.parts[%d] (media in a tool result)", path, k)
		}
		mp, err := gemBlob(rp.Get("inlineData"), path.in(".functionResponse.parts", k).in(".inlineData", -1), d.to)
		if err != nil {
			return Part{}, err
		}
		p.Content = append(p.Content, mp)
	}
	return p, nil
}

// jsonText is a string's value, or any other JSON value's text.
func jsonText(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	return v.Raw
}

func gemBlob(b gjson.Result, path at, to protocol.Family) (Part, error) {
	mime, data := b.Get("mimeType").Str, b.Get("data").Str
	if mime == "" {
		mime = b.Get("mime_type").Str
	}
	switch {
	case strings.HasPrefix(mime, "image/"):
		return Part{Kind: PartImage, MIME: mime, Data: data}, nil
	case mime == "application/pdf":
		return Part{Kind: PartDocument, MIME: mime, Data: data}, nil
	case strings.HasPrefix(mime, "text/"):
		text, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return Part{}, badRequest("%s.data: invalid base64", path)
		}
		return Part{Kind: PartDocument, MIME: "text/plain", Text: string(text)}, nil
	case strings.HasPrefix(mime, "audio/"):
		if _, ok := chatAudioFormat(mime); !capsOf[to].audio || (to == protocol.OpenAI && !ok) {
			return Part{}, refuseField(to, "%s (%s)", path, mime)
		}
		return Part{Kind: PartAudio, MIME: mime, Data: data}, nil
	}
	return Part{}, refuseField(to, "%s (%s)", path, mime)
}
