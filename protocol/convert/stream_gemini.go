package convert

import (
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert/internal/gjwalk"
	"github.com/ccload/ccload/protocol/jsonwalk"
)

// geminiStreamIn decodes a Gemini streamGenerateContent?alt=sse stream: each
// data: chunk is a GenerateContentResponse whose candidates[0].content.parts
// hold text parts, thought parts (thought: true), whole functionCall parts
// and thoughtSignature on any part; finishReason and the final
// usageMetadata come in the last chunk. Only candidate 0 is read.
//
// Signatures: a thought part's signature belongs to its thinking block. A
// signature on another part (Gemini puts it on the first functionCall or
// text part after the thoughts) goes to the thinking block just before, or,
// when there is none, to an empty thinking block of its own, so clients with
// signed thinking blocks (Anthropic) can send it back.
type geminiStreamIn struct {
	usage   Usage
	calls   int // function calls so far: the index of GeminiCallID
	scratch []byte
	args    []byte
}

func (d *geminiStreamIn) decode(p *pipe, data, name string) error {
	if data == "" || data == "[DONE]" {
		return nil
	}
	r := gjson.Parse(data)
	if !r.IsObject() {
		return errStreamShape
	}
	var m [6]gjson.Result
	gjwalk.Pick(r, []string{"error", "usageMetadata", "responseId", "createTime", "candidates", "promptFeedback"}, m[:])
	if e := m[0]; e.Exists() && e.Type != gjson.Null {
		status, msg := streamErrorOf(r, 500)
		return p.fail(status, msg)
	}
	if um := m[1]; um.IsObject() {
		d.usage = geminiUsage(um)
		p.seen(d.usage)
	}
	p.start(strLit(m[2]), geminiTime(m[3].Str), d.usage)
	var c [2]gjson.Result
	gjwalk.Pick(m[4].Get("0"), []string{"content", "finishReason"}, c[:])
	var err error
	c[0].Get("parts").ForEach(func(_, part gjson.Result) bool {
		err = d.part(p, part)
		return err == nil
	})
	if err != nil {
		return err
	}
	if fr := c[1].Str; fr != "" {
		p.finish(stopFromGemini(fr), "", d.usage)
	} else if m[5].Get("blockReason").Str != "" {
		p.finish(stopRefusal, "", d.usage)
	}
	return nil
}

func (d *geminiStreamIn) part(p *pipe, part gjson.Result) error {
	sig := litField(part.Raw, "thoughtSignature")
	if part.Get("thought").Bool() {
		p.delta(deltaThinking, litField(part.Raw, "text"))
		p.delta(deltaSignature, sig)
		return nil
	}
	p.delta(deltaSignature, sig)
	if fc := part.Get("functionCall"); fc.IsObject() {
		name := fc.Get("name")
		id := strLit(fc.Get("id"))
		if !nonEmptyLit(id) {
			d.scratch = wjStr(d.scratch[:0], GeminiCallID(name.Str, d.calls))
			id = bstr(d.scratch)
		}
		d.calls++
		p.blockStart(blockTool, id, strLit(name), "")
		args := fc.Get("args")
		if args.IsObject() {
			d.args = compactJSON(d.args[:0], args.Raw)
		} else {
			d.args = append(d.args[:0], "{}"...)
		}
		d.scratch = wjStr(d.scratch[:0], bstr(d.args))
		p.delta(deltaArgs, bstr(d.scratch))
		p.blockStop()
		return nil
	}
	p.delta(deltaText, litField(part.Raw, "text"))
	return nil
}

func (d *geminiStreamIn) flush(*pipe) {}

// geminiTime reads a createTime (RFC 3339) as unix seconds, 0 if absent.
func geminiTime(s string) int64 {
	if s == "" {
		return 0
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0
	}
	return t.Unix()
}

// geminiStreamOut writes Gemini SSE: data: chunks of GenerateContentResponse
// with one candidate. Text and thinking deltas go out as they come (thought
// parts have thought: true); a function call is buffered until its block
// ends and goes out whole, as Gemini sends calls; the last chunk has
// finishReason and usageMetadata. A thinking block's signature rides on the
// next part, as thoughtSignature (when GeminiThoughtSignature allows it), or
// on an empty text part in the last chunk. Redacted thinking has no Gemini equivalent and
// is not sent.
type geminiStreamOut struct {
	m       *meta
	cur     blockKind
	args    []byte // escaped arguments text of the open call
	sig     []byte // escaped signature of the open thinking block
	pending string // thoughtSignature for the next part
	id      string // literal of the open call's id
	name    string // literal of the open call's name
}

func (o *geminiStreamOut) encode(dst []byte, e *event) []byte {
	switch e.kind {
	case evBlockStart:
		o.cur = e.block
		o.args, o.sig = o.args[:0], o.sig[:0]
		if e.block == blockTool {
			o.id, o.name = strings.Clone(e.id), strings.Clone(e.name)
		}
	case evDelta:
		switch e.delta {
		case deltaText:
			dst = o.chunkOpen(dst)
			dst = append(dst, `{"text":`...)
			dst = append(dst, e.raw...)
			dst = o.signature(dst)
			dst = o.chunkClose(dst, "}", "", nil)
		case deltaThinking:
			dst = o.chunkOpen(dst)
			dst = append(dst, `{"text":`...)
			dst = append(dst, e.raw...)
			dst = o.chunkClose(dst, `,"thought":true}`, "", nil)
		case deltaSignature:
			o.sig = append(o.sig, litInner(e.raw)...)
		case deltaArgs:
			o.args = append(o.args, litInner(e.raw)...)
		}
	case evBlockStop:
		switch o.cur {
		case blockThinking:
			if len(o.sig) > 0 {
				o.pending, _ = GeminiThoughtSignature(unescapeInner(o.sig))
			}
		case blockTool:
			dst = o.call(dst)
		}
		o.cur = blockNone
	case evFinish:
		dst = o.chunkOpen(dst)
		dst = append(dst, `{"text":""`...)
		dst = o.signature(dst)
		dst = o.chunkClose(dst, "}", e.stop.gemini(), &e.usage)
	case evError:
		dst = append(dst, protocol.ErrorEvent(protocol.Gemini, e.status, e.msg)...)
	}
	return dst
}

// call writes the buffered function call. Arguments that are not a JSON
// object (a cut-off upstream) cannot be a Gemini args value: the stream
// fails rather than send the client a call with made-up arguments.
func (o *geminiStreamOut) call(dst []byte) []byte {
	args := unescapeInner(o.args)
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	if !jsonwalk.Valid(args) || !gjson.Parse(args).IsObject() {
		o.m.err = &StreamError{Status: 502, Message: "upstream tool call arguments are not a JSON object"}
		return append(dst, protocol.ErrorEvent(protocol.Gemini, 502, o.m.err.Message)...)
	}
	dst = o.chunkOpen(dst)
	dst = append(dst, `{"functionCall":{"id":`...)
	dst = wjLitOr(dst, o.id, `""`)
	dst = append(dst, `,"name":`...)
	dst = wjLitOr(dst, o.name, `""`)
	dst = append(dst, `,"args":`...)
	dst = compactJSON(dst, args)
	dst = append(dst, '}')
	dst = o.signature(dst)
	return o.chunkClose(dst, "}", "", nil)
}

// signature adds the pending thoughtSignature to the part being written.
func (o *geminiStreamOut) signature(dst []byte) []byte {
	if o.pending == "" {
		return dst
	}
	dst = append(dst, `,"thoughtSignature":`...)
	dst = wjStr(dst, o.pending)
	o.pending = ""
	return dst
}

func (o *geminiStreamOut) chunkOpen(dst []byte) []byte {
	dst = sseOpen(dst, "")
	return append(dst, `{"candidates":[{"content":{"parts":[`...)
}

// chunkClose ends the part with tail, then the chunk; finish and usage go in
// the last chunk only.
func (o *geminiStreamOut) chunkClose(dst []byte, tail, finish string, u *Usage) []byte {
	dst = append(dst, tail...)
	dst = append(dst, `],"role":"model"}`...)
	if finish != "" {
		dst = append(dst, `,"finishReason":`...)
		dst = wjStr(dst, finish)
	}
	dst = append(dst, `,"index":0}]`...)
	if u != nil {
		dst = append(dst, `,"usageMetadata":`...)
		dst = wGeminiUsage(dst, *u)
	}
	dst = append(dst, `,"modelVersion":`...)
	dst = wjStr(dst, o.m.model)
	dst = append(dst, `,"responseId":`...)
	dst = wjStr(dst, o.m.id)
	return sseClose(append(dst, '}'))
}
