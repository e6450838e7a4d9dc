package convert

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert/internal/gjwalk"
)

// chatStreamIn decodes an OpenAI Chat Completions stream: chunks whose
// choices[0].delta carries role, content, reasoning_content (or reasoning,
// as some compatible servers name it), refusal and tool_calls fragments;
// finish_reason in the last choice chunk; an optional usage chunk with
// choices: []; data: [DONE]. Only choice 0 is read (n > 1 is refused on the
// request side).
type chatStreamIn struct {
	tool      int64  // upstream index of the open tool call
	curID     string // its id literal as the upstream sent it
	maxTool   int64  // highest tool index started
	started   bool   // a tool call was started: maxTool is valid
	stop      stopKind
	sawStop   bool
	usage     Usage
	haveUsage bool
	refusal   bool
	scratch   []byte
}

func (d *chatStreamIn) decode(p *pipe, data, name string) error {
	if data == "[DONE]" {
		d.end(p)
		return nil
	}
	if data == "" {
		return nil
	}
	r := gjson.Parse(data)
	var m [5]gjson.Result
	gjwalk.Pick(r, []string{"error", "id", "created", "usage", "choices"}, m[:])
	if e := m[0]; e.Exists() && e.Type != gjson.Null {
		status, msg := streamErrorOf(r, 500)
		return p.fail(status, msg)
	}
	p.start(strLit(m[1]), m[2].Int(), Usage{})
	if u := m[3]; u.IsObject() {
		d.usage, d.haveUsage = chatUsage(u), true
		p.seen(d.usage)
	}
	if ch := m[4].Get("0"); ch.Exists() {
		var c [3]gjson.Result
		gjwalk.Pick(ch, []string{"index", "delta", "finish_reason"}, c[:])
		if c[0].Int() == 0 {
			if err := d.choice(p, c[1], c[2]); err != nil {
				return err
			}
		}
	}
	if d.sawStop && d.haveUsage {
		d.end(p)
	}
	return nil
}

// choice handles the first choice's delta and finish_reason.
func (d *chatStreamIn) choice(p *pipe, dl, finish gjson.Result) error {
	rc := litField(dl.Raw, "reasoning_content")
	if rc == "" {
		rc = litField(dl.Raw, "reasoning")
	}
	p.delta(deltaThinking, rc)
	p.delta(deltaText, litField(dl.Raw, "content"))
	if lit := litField(dl.Raw, "refusal"); nonEmptyLit(lit) {
		d.refusal = true
		p.delta(deltaText, lit)
	}
	var err error
	dl.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
		err = d.toolCall(p, tc)
		return err == nil
	})
	if err != nil {
		return err
	}
	if fr := finish.Str; fr != "" {
		d.stop, d.sawStop = stopFromChat(fr), true
		p.blockStop()
	}
	return nil
}

// toolCall handles one tool_calls[] fragment. A fragment with a new index
// starts a call (the first one carries id and name); later fragments add
// argument text. OpenAI sends the calls one after the other; a fragment for
// a call that is already closed cannot be re-opened in the sequential
// grammars of the other families and fails the stream.
func (d *chatStreamIn) toolCall(p *pipe, tc gjson.Result) error {
	idx := tc.Get("index").Int()
	id := strLit(tc.Get("id"))
	// Some compatible servers leave out index; a new id then marks a new call.
	fresh := nonEmptyLit(id) && id != d.curID
	if p.open != blockTool || idx != d.tool || fresh {
		if d.started && idx <= d.maxTool && !fresh {
			return errInterleavedCalls
		}
		d.curID = strings.Clone(id)
		if !nonEmptyLit(id) {
			d.scratch = wjStr(d.scratch[:0], "call_"+p.meta.id+"_"+strconv.FormatInt(idx, 10))
			id = bstr(d.scratch)
		}
		p.blockStart(blockTool, id, strLit(tc.Get("function.name")), "")
		d.tool, d.maxTool, d.started = idx, max(d.maxTool, idx), true
	}
	p.delta(deltaArgs, litField(tc.Get("function").Raw, "arguments"))
	return nil
}

// errInterleavedCalls fails a stream that goes back to a tool call after
// another one started.
var errInterleavedCalls = errors.New("upstream interleaves the fragments of tool calls")

func (d *chatStreamIn) end(p *pipe) {
	stop := d.stop
	if d.refusal && (stop == stopEnd || stop == stopNone) {
		stop = stopRefusal
	}
	p.finish(stop, "", d.usage)
}

// flush finishes a stream that said finish_reason but never [DONE].
func (d *chatStreamIn) flush(p *pipe) {
	if d.sawStop {
		d.end(p)
	}
}

// chatStreamOut writes OpenAI chat.completion.chunk objects, all with the
// same id, created and model: the role in the first delta, content and
// reasoning_content deltas, tool_calls deltas (index, id, type,
// function.name first, then function.arguments fragments), finish_reason
// in the last choice chunk, a usage chunk with choices: [], data: [DONE].
// Reasoning goes out as reasoning_content, the field DeepSeek introduced and
// OpenAI-compatible clients read; signatures and redacted thinking have no
// place in this grammar and are not sent.
type chatStreamOut struct {
	m     *meta
	head  []byte // {"id":...,"object":"chat.completion.chunk","created":...,"model":...,"choices":[
	tools int64  // tool calls started
	cur   blockKind
}

func (o *chatStreamOut) encode(dst []byte, e *event) []byte {
	switch e.kind {
	case evStart:
		o.head = append(o.head[:0], `{"id":`...)
		o.head = wjStr(o.head, "chatcmpl-"+o.m.id)
		o.head = append(o.head, `,"object":"chat.completion.chunk","created":`...)
		o.head = wjInt(o.head, o.m.at)
		o.head = append(o.head, `,"model":`...)
		o.head = wjStr(o.head, o.m.model)
		o.head = append(o.head, `,"choices":[`...)
		dst = o.chunkOpen(dst)
		dst = append(dst, `{"role":"assistant","content":""}`...)
		dst = o.chunkClose(dst, "")
	case evBlockStart:
		o.cur = e.block
		if e.block == blockTool {
			dst = o.chunkOpen(dst)
			dst = append(dst, `{"tool_calls":[{"index":`...)
			dst = wjInt(dst, o.tools)
			dst = append(dst, `,"id":`...)
			dst = wjLitOr(dst, e.id, `""`)
			dst = append(dst, `,"type":"function","function":{"name":`...)
			dst = wjLitOr(dst, e.name, `""`)
			dst = append(dst, `,"arguments":""}}]}`...)
			dst = o.chunkClose(dst, "")
			o.tools++
		}
	case evDelta:
		switch e.delta {
		case deltaText:
			dst = o.chunkOpen(dst)
			dst = append(dst, `{"content":`...)
			dst = append(dst, e.raw...)
			dst = o.chunkClose(dst, "}")
		case deltaThinking:
			dst = o.chunkOpen(dst)
			dst = append(dst, `{"reasoning_content":`...)
			dst = append(dst, e.raw...)
			dst = o.chunkClose(dst, "}")
		case deltaArgs:
			dst = o.chunkOpen(dst)
			dst = append(dst, `{"tool_calls":[{"index":`...)
			dst = wjInt(dst, o.tools-1)
			dst = append(dst, `,"function":{"arguments":`...)
			dst = append(dst, e.raw...)
			dst = o.chunkClose(dst, "}}]}")
		}
	case evBlockStop:
		o.cur = blockNone
	case evFinish:
		dst = sseOpen(dst, "")
		dst = append(dst, o.head...)
		dst = append(dst, `{"index":0,"delta":{},"logprobs":null,"finish_reason":`...)
		dst = wjStr(dst, e.stop.chat())
		dst = sseClose(append(dst, `}]}`...))
		if !o.m.opt.OmitChatUsage {
			dst = sseOpen(dst, "")
			dst = append(dst, o.head...)
			dst = append(dst, `],"usage":`...)
			dst = wChatUsage(dst, e.usage)
			dst = sseClose(append(dst, '}'))
		}
		dst = sseClose(append(sseOpen(dst, ""), "[DONE]"...))
	case evError:
		dst = append(dst, protocol.ErrorEvent(protocol.OpenAI, e.status, e.msg)...)
	}
	return dst
}

// chunkOpen starts a chunk up to the delta object; chunkClose ends it after
// the caller wrote the delta (tail closes what the caller left open).
func (o *chatStreamOut) chunkOpen(dst []byte) []byte {
	dst = sseOpen(dst, "")
	dst = append(dst, o.head...)
	return append(dst, `{"index":0,"delta":`...)
}

func (o *chatStreamOut) chunkClose(dst []byte, tail string) []byte {
	dst = append(dst, tail...)
	return sseClose(append(dst, `,"logprobs":null,"finish_reason":null}]}`...))
}
