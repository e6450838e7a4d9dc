package convert

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert/internal/gjwalk"
	"github.com/ccload/ccload/protocol/jsonwalk"
	"github.com/ccload/ccload/protocol/signature"
)

// ErrUpstreamBody reports an upstream non-stream body that cannot be read as
// a response of its family (not a JSON object, or an error object). The
// engine answers the client 502 in its error shape.
var ErrUpstreamBody = errors.New("unreadable upstream response")

// Response converts a complete non-stream upstream body of family from into
// the body of family to for the client. model is the client-visible model
// name to report. from == to is native traffic and is never converted; the
// body is then returned as it is.
//
// Every path goes through the canonical respMsg: one decoder per upstream
// family, one encoder per client family, the same blocks, stop reasons and
// usage as the streams (doc.go has the tables).
func Response(from, to protocol.Family, body []byte, model string) ([]byte, error) {
	return response(from, to, body, model, ResponseOptions{}, sysClock{})
}

// ResponseFor is Response for the client request req, so that calls to the
// tools it offered in shapes the upstream lacks (a Responses client's
// namespaced and custom tools) come back in its own shapes.
func ResponseFor(from, to protocol.Family, body []byte, model string, req []byte) ([]byte, error) {
	return response(from, to, body, model, ResponseOptions{Request: req}, sysClock{})
}

// ResponseOptions are what a response conversion knows of the exchange.
type ResponseOptions struct {
	// Request is the client's request body (see ResponseFor).
	Request []byte
	// Origin is the upstream that answered: every reasoning signature the
	// client is handed is tagged with it (package signature), so that the
	// next turn can tell which upstream may verify it.
	Origin signature.Origin
}

// ResponseWith is Response with options.
func ResponseWith(from, to protocol.Family, body []byte, model string, opt ResponseOptions) ([]byte, error) {
	return response(from, to, body, model, opt, sysClock{})
}

func response(from, to protocol.Family, body []byte, model string, opt ResponseOptions, clk clock) ([]byte, error) {
	req := opt.Request
	if from == to {
		return body, nil
	}
	dec, okD := responseDecoders[from]
	enc, okE := responseEncoders[to]
	if !okD || !okE {
		return nil, fmt.Errorf("convert: no response conversion %s -> %s", from, to)
	}
	if !jsonwalk.Valid(jsonwalk.View(body)) || !gjwalk.Parse(body).IsObject() {
		return nil, fmt.Errorf("%w: %s body is not a JSON object", ErrUpstreamBody, from)
	}
	if e := gjson.GetBytes(body, "error"); e.Exists() && e.Type != gjson.Null {
		return nil, fmt.Errorf("%w: %s body is an error: %s", ErrUpstreamBody, from, errorMessage(body, 502))
	}
	var m respMsg
	if err := dec(&m, gjwalk.Parse(body)); err != nil {
		return nil, err
	}
	m.normalise()
	m.tagSignatures(opt.Origin)
	mt := meta{model: model, clk: clk, tools: clientToolsOf(to, req)}
	mt.start(&event{id: jsonLit(m.id), created: m.created})
	return enc(nil, &m, &mt), nil
}

// responseDecoders and responseEncoders are the explicit tables behind the
// 12 non-stream response paths; TestResponseTables checks they are complete.
var (
	responseDecoders = map[protocol.Family]func(m *respMsg, body gjson.Result) error{
		protocol.Anthropic: anthropicResponseIn,
		protocol.OpenAI:    chatResponseIn,
		protocol.Responses: responsesResponseIn,
		protocol.Gemini:    geminiResponseIn,
	}
	responseEncoders = map[protocol.Family]func(dst []byte, m *respMsg, mt *meta) []byte{
		protocol.Anthropic: anthropicResponseOut,
		protocol.OpenAI:    chatResponseOut,
		protocol.Responses: responsesResponseOut,
		protocol.Gemini:    geminiResponseOut,
	}
)

// respMsg is the canonical non-stream response: the blocks of the stream
// model, kept whole. Strings are decoded values; args is JSON text.
type respMsg struct {
	id      string // the upstream's id, "" if none
	created int64  // unix seconds, 0 if the upstream did not say
	blocks  []respBlock
	stop    stopKind
	stopSeq string // the matched stop sequence, when known
	refusal bool   // the text is a refusal (OpenAI refusal fields)
	usage   Usage
}

type respBlock struct {
	kind     blockKind
	text     string // text, thinking text, or redacted data
	sig      string // thinking signature
	id, name string // tool call
	args     string // tool call arguments, a JSON object text
}

// tagSignatures tags the signatures and redacted thinking of the answer
// with the upstream that minted them.
func (m *respMsg) tagSignatures(o signature.Origin) {
	for i := range m.blocks {
		b := &m.blocks[i]
		switch b.kind {
		case blockThinking:
			b.sig = o.Tag(b.sig)
		case blockRedacted:
			b.text = o.Tag(b.text)
		}
	}
}

// addText appends text of a text or thinking block, extending the last
// block when it is of the same kind (and, for thinking, not yet signed).
func (m *respMsg) addText(k blockKind, s string) {
	if s == "" {
		return
	}
	if n := len(m.blocks); n > 0 && m.blocks[n-1].kind == k && m.blocks[n-1].sig == "" {
		m.blocks[n-1].text += s
		return
	}
	m.blocks = append(m.blocks, respBlock{kind: k, text: s})
}

// addSig signs the last block when it is an unsigned thinking block, and
// otherwise adds an empty thinking block carrying the signature (the rule of
// the streams, see geminiStreamIn).
func (m *respMsg) addSig(sig string) {
	if sig == "" {
		return
	}
	if n := len(m.blocks); n > 0 && m.blocks[n-1].kind == blockThinking && m.blocks[n-1].sig == "" {
		m.blocks[n-1].sig = sig
		return
	}
	m.blocks = append(m.blocks, respBlock{kind: blockThinking, sig: sig})
}

// addCall appends a tool call. Arguments that are empty become {}; others
// must be a JSON object.
func (m *respMsg) addCall(id, name, args string) error {
	args = strings.TrimSpace(args)
	if args == "" {
		args = "{}"
	}
	if !jsonwalk.Valid(args) || !gjson.Parse(args).IsObject() {
		return fmt.Errorf("%w: arguments of tool call %q are not a JSON object", ErrUpstreamBody, name)
	}
	m.blocks = append(m.blocks, respBlock{kind: blockTool, id: id, name: name, args: string(compactJSON(nil, args))})
	return nil
}

// normalise applies the rules the streams apply in the pipe: a response
// with tool calls that ended normally reports tool_use, a refusal that ended
// normally reports refusal, and an unknown reason is end_turn.
func (m *respMsg) normalise() {
	tools := false
	for _, b := range m.blocks {
		tools = tools || b.kind == blockTool
	}
	if m.refusal && (m.stop == stopEnd || m.stop == stopNone) {
		m.stop = stopRefusal
	}
	if tools && (m.stop == stopEnd || m.stop == stopNone) {
		m.stop = stopToolUse
	}
	if m.stop == stopNone {
		m.stop = stopEnd
	}
}

// joined returns the text of every block of kind k, separated by a blank
// line, for families that have one text field (OpenAI chat).
func (m *respMsg) joined(k blockKind) (string, bool) {
	var b strings.Builder
	found := false
	for _, bl := range m.blocks {
		if bl.kind != k || bl.text == "" {
			continue
		}
		if found {
			b.WriteString("\n\n")
		}
		b.WriteString(bl.text)
		found = true
	}
	return b.String(), found
}

// jsonLit returns s as a JSON string literal, "" for "".
func jsonLit(s string) string {
	if s == "" {
		return ""
	}
	return string(wjStr(nil, s))
}
