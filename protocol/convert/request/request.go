package request

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/signature"

	"github.com/tidwall/gjson"
)

// ErrUnrepresentable reports that a request uses something the target family
// cannot express. The wrapped message names the field in the client's terms,
// e.g. `tools[2] (type "web_search") cannot be sent to a gemini upstream`.
// The engine answers 400 in the client's error shape with that message.
// Malformed client bodies (bad JSON, wrong types) wrap it too: both are the
// client's fault and both become a 400.
var ErrUnrepresentable = errors.New("not representable")

// Convert converts a client request body of family from into a body for
// family to. model is the upstream model name put in the body (Gemini has no
// model in the body: the engine puts it in the path). stream is the client's
// stream flag (for Gemini clients it comes from the path). from == to is never
// called: native traffic is not converted.
//
// Every path goes through the canonical model Req: one decoder per client
// family reads the body into a Req, refusing what the target cannot express
// (the decoder knows the field's name in the client's terms), and one encoder
// per upstream family writes the Req. The fields dropped or refused on each
// path are listed in the package documentation (doc.go).
func Convert(from, to protocol.Family, body []byte, model string, stream bool) ([]byte, error) {
	out, _, err := ConvertWith(from, to, body, model, stream, Options{})
	return out, err
}

// Options are what the channel allows a conversion to do.
type Options struct {
	// HostedSearch maps a hosted web search tool (Responses web_search,
	// Anthropic web_search_*, Gemini googleSearch) to the target's own
	// (channel web_search: true). Off, the tool is left out with a note:
	// the upstream's search is billed and behaves differently, so the
	// operator opts in.
	HostedSearch bool
	// Checked says the caller has found body to be one valid JSON object
	// already (the engine's admission does), so ConvertWith
	// does not check it again: a second walk of every byte, about a sixth
	// of converting an agent's request (perf).
	Checked bool
	// Origin is the upstream the request goes to (its family and channel):
	// a reasoning signature in the client's history reaches it only when
	// that upstream minted it (signature.For); every other is left out.
	Origin signature.Origin
	// DropSignatures leaves out every signature: the retry after an
	// upstream refused one (docs/reasoning.md).
	DropSignatures bool
}

// ConvertWith is Convert with options. It also returns the conversion notes:
// what was dropped or approximated because the target cannot express it (a
// preference such as parallel_tool_calls false, a hosted tool left out), one
// short sentence each in the client's terms, for the log row.
func ConvertWith(from, to protocol.Family, body []byte, model string, stream bool, opt Options) ([]byte, []string, error) {
	if from == to {
		return nil, nil, fmt.Errorf("convert: request %s -> %s is native traffic, not a conversion", from, to)
	}
	dec, ok := requestDecoders[from]
	if !ok {
		return nil, nil, fmt.Errorf("convert: unknown client family %q", from)
	}
	enc, ok := requestEncoders[to]
	if !ok {
		return nil, nil, fmt.Errorf("convert: unknown upstream family %q", to)
	}
	if !opt.Checked && !validObject(body) {
		return nil, nil, fmt.Errorf("%w: request body is not a JSON object", ErrUnrepresentable)
	}
	r := Req{Model: model, Stream: stream, opt: opt}
	if err := dec(&r, body, to); err != nil {
		return nil, nil, err
	}
	if err := r.checkToolNames(); err != nil {
		return nil, nil, err
	}
	r.resolveSignatures(from, to, opt.Origin)
	out, err := enc(&r)
	return out, r.Notes, err
}

// requestDecoders and requestEncoders are the explicit tables behind the 12
// request paths (4 decoders x 4 encoders); TestRequestTables checks that every
// family has both.
var (
	requestDecoders = map[protocol.Family]func(r *Req, body []byte, to protocol.Family) error{
		protocol.Anthropic: decodeAnthropic,
		protocol.OpenAI:    decodeOpenAI,
		protocol.Responses: decodeResponses,
		protocol.Gemini:    decodeGemini,
	}
	requestEncoders = map[protocol.Family]func(r *Req) ([]byte, error){
		protocol.Anthropic: encodeAnthropic,
		protocol.OpenAI:    encodeOpenAI,
		protocol.Responses: encodeResponses,
		protocol.Gemini:    encodeGemini,
	}
)

// Req is the canonical request every decoder produces and every encoder
// reads. Numbers are kept as their JSON text so 0.7 stays 0.7; "" is unset.
type Req struct {
	Model  string
	Stream bool

	System []string // instructions before the conversation, in order
	Msgs   []Msg    // the conversation; consecutive same-role turns are merged

	Tools      []ToolDef
	ToolChoice ToolChoice
	Parallel   Tri // parallel tool calls allowed

	MaxTokens   int64 // 0: unset
	Temperature string
	TopP        string
	TopK        string
	Seed        string
	Presence    string // presence penalty
	Frequency   string // frequency penalty
	Stop        []string

	Reasoning Reasoning
	Format    *OutputFormat // structured output; nil: free text
	Verbosity string        // OpenAI verbosity hint: low, medium, high

	// Search offers the target's hosted web search tool (the client asked
	// for one and the channel allows it).
	Search bool
	// Notes say what the conversion dropped or approximated (ConvertWith).
	Notes []string

	opt Options
}

// note records a conversion note.
func (r *Req) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// checkToolNames refuses two tools offered under one name, which flattening
// could produce (a plain tool named like a flattened one): the answer's
// calls could not be told apart.
func (r *Req) checkToolNames() error {
	if len(r.Tools) < 2 {
		return nil
	}
	seen := make(map[string]bool, len(r.Tools))
	for _, t := range r.Tools {
		if seen[t.Name] {
			return badRequest("two tools are named %q", t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}

// MsgRole is the author of a Msg.
type MsgRole uint8

// The roles. RoleSystem is an instruction inside the conversation (after the
// first user or assistant turn), as Claude Code and chat clients send them.
const (
	RoleUser MsgRole = iota
	RoleAssistant
	RoleSystem
)

// Msg is one turn. Tool results belong to user turns, tool calls and
// thinking to assistant turns.
type Msg struct {
	Role  MsgRole
	Parts []Part
}

// PartKind says which fields of a Part are used.
type PartKind uint8

// The part kinds.
const (
	PartText       PartKind = iota // Text
	PartImage                      // MIME + Data (base64) or URL
	PartDocument                   // MIME + Data or URL, or Text for a plain-text document; Name
	PartAudio                      // MIME + Data
	PartToolCall                   // ID, Name, Args (JSON object text) or Input (custom tool)
	PartToolResult                 // ID, Content, IsError
	PartThinking                   // Text (thinking or summary), Sig, ID (Responses item id)
	PartRedacted                   // Data: Anthropic redacted_thinking payload
)

// Part is one piece of a turn.
type Part struct {
	Kind PartKind

	Text string
	MIME string
	Data string // base64 payload
	URL  string
	Name string // tool name, or a document's title / file name

	ID      string
	Args    string // tool call arguments: a JSON object
	Input   string // custom (freeform) tool call input
	Custom  bool   // tool call of a custom (freeform) tool
	IsError bool
	Sig     string // thinking signature / encrypted reasoning
	Content []Part // tool result content: text, image, document
}

// ToolDef is one tool offered to the model.
type ToolDef struct {
	Name   string
	Desc   string
	Params string // JSON Schema of the arguments (object); "" for none
	Strict Tri
	Custom bool   // freeform tool taking one string (Responses/Chat "custom")
	Format string // custom tool input format object (JSON), "" for free text
}

// ToolChoice is how the model may use tools.
type ToolChoice struct {
	Mode ChoiceMode
	Name string // ChoiceTool: the tool
}

// ChoiceMode is a tool_choice mode.
type ChoiceMode uint8

// The tool choice modes; ChoiceUnset leaves the target's default (auto).
const (
	ChoiceUnset ChoiceMode = iota
	ChoiceAuto
	ChoiceNone
	ChoiceRequired // Anthropic "any", OpenAI "required", Gemini ANY
	ChoiceTool     // one named tool
)

// Reasoning is the thinking configuration. See the budget/effort table in the
// package documentation.
type Reasoning struct {
	Effort   string // none, minimal, low, medium, high, xhigh, max; "" unset
	Budget   int64  // explicit token budget (Anthropic budget_tokens, Gemini thinkingBudget > 0)
	Adaptive bool   // model decides (Anthropic adaptive, Gemini thinkingBudget -1)
	Summary  string // visible thinking wanted: auto, concise, detailed; "" none
}

func (r Reasoning) set() bool { return r.Effort != "" || r.Budget > 0 || r.Adaptive }

// OutputFormat is a structured-output request.
type OutputFormat struct {
	Schema string // JSON Schema; "" means any JSON object (json_object mode)
	Name   string
	Desc   string
	Strict Tri
}

// Tri is an optional boolean.
type Tri uint8

// The Tri values.
const (
	TriUnset Tri = iota
	TriFalse
	TriTrue
)

func triOf(b bool) Tri {
	if b {
		return TriTrue
	}
	return TriFalse
}

// refuseField builds the ErrUnrepresentable error for a field the target cannot
// express. what names the field in the client's terms.
func refuseField(to protocol.Family, format string, args ...any) error {
	article := "a"
	if f := string(to); f != "" && strings.ContainsRune("aeiou", rune(f[0])) {
		article = "an"
	}
	return fmt.Errorf("%w: %s cannot be sent to %s %s upstream", ErrUnrepresentable, fmt.Sprintf(format, args...), article, to)
}

// badRequest builds the error for a malformed client body.
func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: invalid request: %s", ErrUnrepresentable, fmt.Sprintf(format, args...))
}

// addMsg appends parts to the conversation, merging them into the last turn
// when it has the same role (every family accepts, or needs, one turn per
// role change). System turns are never merged into the system prompt here:
// the decoders decide what is leading.
func (r *Req) addMsg(role MsgRole, parts ...Part) {
	if len(parts) == 0 {
		return
	}
	if n := len(r.Msgs); n > 0 && r.Msgs[n-1].Role == role {
		r.Msgs[n-1].Parts = append(r.Msgs[n-1].Parts, parts...)
		return
	}
	r.Msgs = append(r.Msgs, Msg{Role: role, Parts: parts})
}

// addSystem adds an instruction: to the system prompt while no turn has been
// seen, else as a system turn in place.
func (r *Req) addSystem(text string) {
	if len(r.Msgs) == 0 {
		r.System = append(r.System, text)
		return
	}
	r.addMsg(RoleSystem, Part{Kind: PartText, Text: text})
}

// toolNames maps tool call ids to tool names over the whole conversation, for
// targets whose tool results carry the name (Gemini functionResponse).
func (r *Req) toolNames() map[string]string {
	m := make(map[string]string)
	for i := range r.Msgs {
		for j := range r.Msgs[i].Parts {
			if p := &r.Msgs[i].Parts[j]; p.Kind == PartToolCall {
				m[p.ID] = p.Name
			}
		}
	}
	return m
}

// customTools names the tools offered as custom (freeform) tools, so targets
// without them can map their calls to the one-argument function.
func (r *Req) customTools() map[string]bool {
	var m map[string]bool
	for _, t := range r.Tools {
		if t.Custom {
			if m == nil {
				m = make(map[string]bool)
			}
			m[t.Name] = true
		}
	}
	return m
}

// targetCaps says which optional features an upstream family can express.
// Decoders consult it so that a refusal names the field in the client's terms.
type targetCaps struct {
	imageURL    bool // images by URL (not fetched by us: Gemini cannot take them)
	docURL      bool // documents (PDF) by URL
	audio       bool // audio input
	stop        bool // stop sequences
	penalties   bool // presence / frequency penalty
	jsonObject  bool // schema-less JSON mode
	noParallel  bool // can forbid parallel tool calls
	customTools bool // freeform tools natively (else a one-string-argument function); openai: see writer.tool
	resultMedia bool // images / documents inside tool results
	search      bool // a hosted web search tool of its own
}

var capsOf = map[protocol.Family]targetCaps{
	protocol.Anthropic: {imageURL: true, docURL: true, stop: true, noParallel: true, resultMedia: true, search: true},
	protocol.OpenAI:    {imageURL: true, audio: true, stop: true, penalties: true, jsonObject: true, noParallel: true},
	protocol.Responses: {imageURL: true, docURL: true, jsonObject: true, noParallel: true, customTools: true, resultMedia: true, search: true},
	protocol.Gemini:    {audio: true, stop: true, penalties: true, jsonObject: true, resultMedia: true, search: true},
}

// hostedSearch handles a hosted web search tool of the client (what names
// it in the client's terms): offered as the target's own when the target has
// one and the channel allows it, else left out with a note. Never refused:
// without it the model answers from what it knows, which the client sees.
func (r *Req) hostedSearch(to protocol.Family, what string) {
	switch {
	case !capsOf[to].search:
		r.note("%s left out: %s upstreams have no hosted web search", what, to)
	case !r.opt.HostedSearch:
		r.note("%s left out: the channel does not enable web_search", what)
	default:
		r.Search = true
	}
}

// functionShape is how a custom (freeform) tool is offered to a family
// without them: a function with one required string argument named "input",
// the input format (grammar) appended to the description.
func (t *ToolDef) functionShape() (desc, params string) {
	desc = t.Desc
	f := gjson.Parse(t.Format)
	switch f.Get("type").Str {
	case "grammar":
		desc += "\n\nThe `input` argument must match this " + f.Get("syntax").Str + " grammar:\n" + f.Get("definition").Str
	default:
		if desc != "" {
			desc += "\n\n"
		}
		desc += "The `input` argument is free text."
	}
	return desc, `{"type":"object","properties":{"input":{"type":"string"}},"required":["input"],"additionalProperties":false}`
}

// callArgs is a tool call's arguments as a JSON object; a custom tool call
// becomes {"input": "..."}, its function shape.
func (p *Part) callArgs() string {
	if p.Custom {
		return string(appendString(append(make([]byte, 0, len(p.Input)+12), `{"input":`...), p.Input)) + "}"
	}
	if p.Args == "" {
		return "{}"
	}
	return p.Args
}
