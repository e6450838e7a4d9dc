package convert

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/jsonwalk"
	"github.com/ccload/ccload/protocol/signature"
)

// Stream converts an upstream SSE stream, event by event, into the client
// family's SSE grammar. It is not safe for concurrent use.
//
// emit receives complete SSE blocks ("event: ...\ndata: ...\n\n"), all the
// blocks one upstream event produced in one call, ready to write and flush.
// The slice is reused after emit returns: write it, do not keep it.
//
// When Event or Close returns an error, the client has already been sent an
// error event in its own grammar (the error is a *StreamError carrying the
// status and message); the engine stops reading, records the failure and
// sends nothing more. Later calls emit nothing.
type Stream interface {
	// Event converts one upstream event. Events the client grammar has no
	// use for (pings, keep-alives, unknown types) emit nothing.
	Event(ev *protocol.Event, emit func([]byte)) error
	// Close is called at upstream EOF. It emits the closing events the
	// client needs (message_stop, [DONE], response.completed, the last Gemini
	// chunk) when the upstream ended without its own terminator. An upstream
	// that ended before saying how the response finished is truncated: the
	// client gets an error event and Close returns a *StreamError (502).
	Close(emit func([]byte)) error
	// Usage is what has been seen so far; after Close it is the final count.
	Usage() Usage
}

// StreamOptions adjust a converted stream to what the client asked for.
type StreamOptions struct {
	// OmitChatUsage leaves out the OpenAI chat usage chunk (choices: [])
	// before [DONE], for a client that did not send
	// stream_options.include_usage: some clients index choices[0] on every
	// chunk. The usage is still counted for Usage().
	OmitChatUsage bool
	// Request is the client's request body. Calls to the tools it offered
	// in shapes the upstream lacks (namespaced and custom tools of a
	// Responses client) come back in the client's shapes only with it.
	Request []byte
	// Origin is the upstream that answers: every reasoning signature the
	// client is handed is tagged with it (package signature).
	Origin signature.Origin
}

// StreamError is the error Event and Close return once the client has been
// sent an error event: an upstream error event (with the upstream's status
// and message), a malformed upstream event, or a truncated stream.
type StreamError struct {
	Status  int
	Message string
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("upstream stream error %d: %s", e.Status, e.Message)
}

// NewStream returns the converter of a stream from the upstream family from
// to the client family to; model is the client-visible model name reported
// in the client's events. from == to is native traffic and is never
// converted; NewStream then returns a pass-through that only counts usage.
func NewStream(from, to protocol.Family, model string) Stream {
	return NewStreamWith(from, to, model, StreamOptions{})
}

// NewStreamWith is NewStream with options.
func NewStreamWith(from, to protocol.Family, model string, opt StreamOptions) Stream {
	return newStream(from, to, model, opt, sysClock{})
}

func newStream(from, to protocol.Family, model string, opt StreamOptions, clk clock) Stream {
	if from == to {
		return &passStream{t: UsageTracker{f: from}}
	}
	newDec, okD := streamDecoders[from]
	newEnc, okE := streamEncoders[to]
	if !okD || !okE {
		return &badStream{err: fmt.Errorf("convert: no stream conversion %s -> %s", from, to)}
	}
	m := meta{model: model, clk: clk, opt: opt, tools: clientToolsOf(to, opt.Request)}
	m.opt.Request = nil // read for the tools only: the stream must not keep the client's body
	return &pipe{dec: newDec(), enc: newEnc(&m), meta: &m}
}

// streamDecoders and streamEncoders are the explicit tables behind the 12
// stream paths (4 decoders x 4 encoders through the canonical events);
// TestStreamTables checks that every family has both.
var (
	streamDecoders = map[protocol.Family]func() streamDecoder{
		protocol.Anthropic: func() streamDecoder { return &anthropicStreamIn{} },
		protocol.OpenAI:    func() streamDecoder { return &chatStreamIn{} },
		protocol.Responses: func() streamDecoder { return &responsesStreamIn{} },
		protocol.Gemini:    func() streamDecoder { return &geminiStreamIn{} },
	}
	streamEncoders = map[protocol.Family]func(m *meta) streamEncoder{
		protocol.Anthropic: func(m *meta) streamEncoder { return &anthropicStreamOut{m: m} },
		protocol.OpenAI:    func(m *meta) streamEncoder { return &chatStreamOut{m: m} },
		protocol.Responses: func(m *meta) streamEncoder { return &responsesStreamOut{m: m} },
		protocol.Gemini:    func(m *meta) streamEncoder { return &geminiStreamOut{m: m} },
	}
)

// A streamDecoder reads one upstream family's events and turns them into
// canonical events through the pipe's methods.
type streamDecoder interface {
	// decode handles one upstream event whose data is valid JSON.
	decode(p *pipe, data string, name string) error
	// flush runs at upstream EOF, before the pipe checks that the stream
	// finished (OpenAI chat without [DONE] finishes here).
	flush(p *pipe)
}

// A streamEncoder writes canonical events in one client family's grammar.
// encode appends the SSE blocks for e to dst.
type streamEncoder interface {
	encode(dst []byte, e *event) []byte
}

// The canonical stream events. A decoder produces them in this grammar,
// which the pipe enforces: evStart first; then blocks, at most one open at a
// time, each evBlockStart, evDelta*, evBlockStop; then evFinish or evError.
type evKind uint8

const (
	evStart      evKind = iota + 1 // id, created, usage known so far
	evBlockStart                   // block; id and name for a tool call; raw data for redacted thinking
	evDelta                        // delta: a fragment of the open block
	evBlockStop                    //
	evFinish                       // stop, stopSeq, usage (final)
	evError                        // status, msg
)

// blockKind is the kind of a content block.
type blockKind uint8

const (
	blockNone     blockKind = iota
	blockText               // visible text
	blockThinking           // reasoning text, with an optional signature
	blockRedacted           // Anthropic redacted_thinking: opaque data, no text
	blockTool               // a function call: id, name, JSON arguments
)

// deltaKind is the kind of a fragment; each belongs in one block kind.
type deltaKind uint8

const (
	deltaText      deltaKind = iota + 1 // blockText
	deltaThinking                       // blockThinking
	deltaSignature                      // blockThinking: part of its signature
	deltaArgs                           // blockTool: a fragment of the JSON arguments text
)

func (d deltaKind) block() blockKind {
	switch d {
	case deltaText:
		return blockText
	case deltaArgs:
		return blockTool
	}
	return blockThinking
}

// event is one canonical event. String fields that hold JSON string
// literals (quotes included) are marked "lit"; they may point into the
// upstream event and are valid only during encode.
type event struct {
	kind    evKind
	block   blockKind // evBlockStart
	delta   deltaKind // evDelta
	raw     string    // lit: evDelta fragment; evBlockStart of blockRedacted: its data
	id      string    // lit: evStart message id (may be ""); evBlockStart tool call id
	name    string    // lit: evBlockStart tool name
	created int64     // evStart: unix seconds, 0 when the upstream did not say
	stop    stopKind  // evFinish
	stopSeq string    // lit: evFinish, the stop sequence that matched, if known
	usage   Usage     // evStart (input so far), evFinish (final)
	status  int       // evError
	msg     string    // evError
}

// meta is what every encoder of a stream shares: the client-visible model,
// the clock and ids, and the options.
type meta struct {
	model string
	clk   clock
	opt   StreamOptions
	tools clientTools // the client's reshaped tools, by the name sent upstream
	id    string      // base of every id the encoder writes, set at evStart
	at    int64       // created time, set at evStart
	// err is set by an encoder that had to fail the stream (it has already
	// written the client's error event); the pipe then ends the stream.
	err *StreamError
}

// start fixes the response id base and the created time from the upstream's,
// or from the clock when the upstream gave none.
func (m *meta) start(e *event) {
	m.id = idBase(unquote(e.id))
	if m.id == "" {
		m.id = m.clk.id()
	}
	m.at = e.created
	if m.at == 0 {
		m.at = m.clk.now()
	}
}

// pipe is the Stream of one converted direction: a decoder of the upstream
// family feeding an encoder of the client family.
type pipe struct {
	dec  streamDecoder
	enc  streamEncoder
	meta *meta
	ev   event  // the event being built; reused so nothing escapes per event
	buf  []byte // output of the current call, reused

	started, done bool
	open          blockKind // the open block, blockNone between blocks
	sigTagged     bool      // the open block's signature has its tag header
	tools         int       // tool blocks seen, to report tool_use
	usage         Usage
}

func (p *pipe) Event(ev *protocol.Event, emit func([]byte)) error {
	if p.done {
		return nil
	}
	p.buf = p.buf[:0]
	var err error
	switch {
	case len(ev.Data) == 0 || ev.IsDone():
		// [DONE] and data-less events: the decoder may finish on them.
		err = p.dec.decode(p, bstr(ev.Data), bstr(ev.Name))
	case !jsonwalk.Valid(jsonwalk.View(ev.Data)):
		err = p.failMalformed(ev)
	default:
		err = p.dec.decode(p, bstr(ev.Data), bstr(ev.Name))
	}
	if err != nil && !p.done {
		err = p.fail(502, err.Error())
	}
	if err == nil && p.meta.err != nil && !p.done {
		p.done, err = true, p.meta.err
	}
	if len(p.buf) > 0 {
		emit(p.buf)
	}
	return err
}

func (p *pipe) Close(emit func([]byte)) error {
	if p.done {
		return nil
	}
	p.buf = p.buf[:0]
	p.dec.flush(p)
	var err error
	if p.meta.err != nil && !p.done {
		p.done, err = true, p.meta.err
	}
	if !p.done {
		err = p.fail(502, "upstream stream ended before the response was complete")
	}
	if len(p.buf) > 0 {
		emit(p.buf)
	}
	return err
}

func (p *pipe) Usage() Usage { return p.usage }

func (p *pipe) failMalformed(ev *protocol.Event) error {
	name := bstr(ev.Name)
	if name == "" {
		name = "data"
	}
	return p.fail(502, "malformed upstream "+clip(name, 64)+" event: not JSON")
}

// The methods below are the decoders' only way to produce events. They keep
// the canonical grammar: they open the message and the right block when a
// decoder skips that step, and close an open block before another starts.

// start opens the message. id is the upstream's id as a JSON literal (or "").
func (p *pipe) start(id string, created int64, u Usage) {
	if p.started || p.done {
		return
	}
	p.started = true
	p.usage = u
	p.ev = event{kind: evStart, id: id, created: created, usage: u}
	p.meta.start(&p.ev)
	p.buf = p.enc.encode(p.buf, &p.ev)
}

// blockStart opens a block, closing the open one. id and name are JSON
// literals for a tool call; raw is a redacted block's data literal.
func (p *pipe) blockStart(k blockKind, id, name, raw string) {
	if p.done {
		return
	}
	p.start("", 0, p.usage)
	p.blockStop()
	if k == blockTool {
		p.tools++
	}
	p.open, p.sigTagged = k, false
	if k == blockRedacted {
		raw = p.tagLit(raw)
	}
	p.ev = event{kind: evBlockStart, block: k, id: id, name: name, raw: raw}
	p.buf = p.enc.encode(p.buf, &p.ev)
}

// delta adds a fragment (a JSON string literal) to the open block, opening a
// block of the right kind when the open one is not: a text delta after a
// thinking block starts a text block, a signature after text starts an empty
// thinking block that carries it. Argument fragments need an open tool call
// (it has an id and a name); without one they are dropped.
func (p *pipe) delta(d deltaKind, lit string) {
	if p.done || !nonEmptyLit(lit) {
		return
	}
	if want := d.block(); p.open != want {
		if want == blockTool {
			return
		}
		p.blockStart(want, "", "", "")
	}
	if d == deltaSignature && !p.sigTagged {
		// A signature may come in fragments: the header goes before the
		// first, which is all a tag needs (package signature).
		p.sigTagged = true
		lit = p.tagLit(lit)
	}
	p.ev = event{kind: evDelta, delta: d, raw: lit}
	p.buf = p.enc.encode(p.buf, &p.ev)
}

// tagLit puts the origin's tag header inside a non-empty JSON string
// literal (the start of a signature or of redacted thinking data).
func (p *pipe) tagLit(lit string) string {
	h := p.meta.opt.Origin.Header()
	if h == "" || !nonEmptyLit(lit) {
		return lit
	}
	return `"` + h + lit[1:]
}

// blockStop closes the open block, if any.
func (p *pipe) blockStop() {
	if p.open == blockNone || p.done {
		return
	}
	p.open = blockNone
	p.ev = event{kind: evBlockStop}
	p.buf = p.enc.encode(p.buf, &p.ev)
}

// seen records usage reported before the finish, for Usage().
func (p *pipe) seen(u Usage) { p.usage = u }

// finish ends the message. A response that made tool calls and stopped
// normally reports tool_use whatever the upstream said (Gemini says STOP,
// some OpenAI-compatible upstreams say stop).
func (p *pipe) finish(stop stopKind, stopSeq string, u Usage) {
	if p.done {
		return
	}
	p.start("", 0, u)
	p.blockStop()
	if p.tools > 0 && (stop == stopEnd || stop == stopNone) {
		stop = stopToolUse
	}
	if stop == stopNone {
		stop = stopEnd
	}
	p.done = true
	p.usage = u
	p.ev = event{kind: evFinish, stop: stop, stopSeq: stopSeq, usage: u}
	p.buf = p.enc.encode(p.buf, &p.ev)
}

// fail sends the client an error event and ends the stream. It returns the
// *StreamError that Event and Close report.
func (p *pipe) fail(status int, msg string) error {
	if p.done {
		return nil
	}
	if status < 400 || status > 599 {
		status = 502
	}
	p.done = true
	p.ev = event{kind: evError, status: status, msg: msg}
	p.buf = p.enc.encode(p.buf, &p.ev)
	return &StreamError{Status: status, Message: msg}
}

// passStream is the from == to case: the events go out as they came.
type passStream struct{ t UsageTracker }

func (s *passStream) Event(ev *protocol.Event, emit func([]byte)) error {
	s.t.Observe(ev)
	emit(ev.Raw)
	return nil
}
func (s *passStream) Close(func([]byte)) error { return nil }
func (s *passStream) Usage() Usage             { return s.t.Usage() }

// badStream is a stream between families this package does not know.
type badStream struct{ err error }

func (s *badStream) Event(*protocol.Event, func([]byte)) error { return s.err }
func (s *badStream) Close(func([]byte)) error                  { return s.err }
func (s *badStream) Usage() Usage                              { return Usage{} }

// clock gives the encoders the time and fresh ids; tests inject a fixed one.
type clock interface {
	now() int64 // unix seconds
	id() string // a fresh random id base: letters and digits
}

type sysClock struct{}

func (sysClock) now() int64 { return time.Now().Unix() }

func (sysClock) id() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	var b [24]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}

// idBase strips a family's id prefix, so an upstream "msg_01X" becomes the
// base "01X" that each encoder prefixes its own way ("chatcmpl-01X",
// "resp_01X", "msg_01X").
func idBase(id string) string {
	for _, p := range [...]string{"msg_", "resp_", "chatcmpl-"} {
		if strings.HasPrefix(id, p) {
			return id[len(p):]
		}
	}
	return id
}

// unquote returns the value of a JSON string literal (or "" for "").
func unquote(lit string) string {
	if lit == "" {
		return ""
	}
	return unescapeInner([]byte(litInner(lit)))
}

// clip shortens s to at most n bytes for messages.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// errStreamShape is what a decoder returns for an event of the right JSON
// but an impossible shape; the pipe turns it into a 502 error event.
var errStreamShape = errors.New("malformed upstream event")
