package convert

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
)

// anthropicStreamIn decodes an Anthropic Messages stream: message_start,
// content_block_start/delta/stop per block, message_delta (stop reason and
// cumulative usage), message_stop; ping is ignored, error fails the stream.
type anthropicStreamIn struct {
	counts  anthropicCounts
	stop    stopKind
	stopSeq string // literal, owned
	skip    bool   // the upstream block is of a kind no other family has
	scratch []byte
}

func (d *anthropicStreamIn) decode(p *pipe, data, name string) error {
	typ := gjson.Get(data, "type").Str
	if typ == "" {
		typ = name
	}
	switch typ {
	case "message_start":
		m := gjson.Get(data, "message")
		d.counts.merge(m.Get("usage"))
		p.start(strLit(m.Get("id")), 0, d.counts.usage())
	case "content_block_start":
		d.blockStart(p, gjson.Get(data, "content_block"))
	case "content_block_delta":
		if d.skip {
			return nil
		}
		dl := gjson.Get(data, "delta")
		switch dl.Get("type").Str {
		case "text_delta":
			p.delta(deltaText, litField(dl.Raw, "text"))
		case "thinking_delta":
			p.delta(deltaThinking, litField(dl.Raw, "thinking"))
		case "signature_delta":
			p.delta(deltaSignature, litField(dl.Raw, "signature"))
		case "input_json_delta":
			p.delta(deltaArgs, litField(dl.Raw, "partial_json"))
		}
	case "content_block_stop":
		if d.skip {
			d.skip = false
			return nil
		}
		p.blockStop()
	case "message_delta":
		d.counts.merge(gjson.Get(data, "usage"))
		dl := gjson.Get(data, "delta")
		if s := stopFromAnthropic(dl.Get("stop_reason").Str); s != stopNone {
			d.stop = s
		}
		if seq := strLit(dl.Get("stop_sequence")); seq != "" {
			d.stopSeq = strings.Clone(seq)
		}
		p.seen(d.counts.usage())
	case "message_stop":
		p.finish(d.stop, d.stopSeq, d.counts.usage())
	case "error":
		status, msg := streamErrorOf(gjson.Parse(data), 500)
		return p.fail(status, msg)
	}
	return nil
}

// blockStart opens the canonical block for an upstream content block. Server
// tool blocks (server_tool_use, web_search_tool_result, ...) have no
// equivalent in the other families and are skipped with their deltas.
func (d *anthropicStreamIn) blockStart(p *pipe, b gjson.Result) {
	d.skip = false
	switch b.Get("type").Str {
	case "text":
		p.blockStart(blockText, "", "", "")
		p.delta(deltaText, strLit(b.Get("text")))
	case "thinking":
		p.blockStart(blockThinking, "", "", "")
		p.delta(deltaThinking, strLit(b.Get("thinking")))
		p.delta(deltaSignature, strLit(b.Get("signature")))
	case "redacted_thinking":
		p.blockStart(blockRedacted, "", "", strLit(b.Get("data")))
	case "tool_use":
		p.blockStart(blockTool, strLit(b.Get("id")), strLit(b.Get("name")), "")
		// The input is {} and arrives in input_json_delta; a start that
		// already carries arguments passes them on as the first fragment.
		if in := b.Get("input"); in.IsObject() && strings.TrimSpace(in.Raw) != "{}" {
			d.scratch = wjStr(d.scratch[:0], in.Raw)
			p.delta(deltaArgs, bstr(d.scratch))
		}
	default:
		d.skip = true
	}
}

func (d *anthropicStreamIn) flush(p *pipe) {
	if d.stop != stopNone { // message_delta came, message_stop did not
		p.finish(d.stop, d.stopSeq, d.counts.usage())
	}
}

// anthropicStreamOut writes the Anthropic Messages grammar: message_start
// (input usage so far), per block content_block_start, content_block_delta
// (text_delta, thinking_delta, signature_delta, input_json_delta) and
// content_block_stop with increasing indices, then message_delta (stop
// reason, full usage) and message_stop.
type anthropicStreamOut struct {
	m     *meta
	index int64 // index of the open block; the next block's index once closed
}

func (o *anthropicStreamOut) encode(dst []byte, e *event) []byte {
	switch e.kind {
	case evStart:
		dst = sseOpen(dst, "message_start")
		dst = append(dst, `{"type":"message_start","message":{"id":`...)
		dst = wjStr(dst, "msg_"+o.m.id)
		dst = append(dst, `,"type":"message","role":"assistant","model":`...)
		dst = wjStr(dst, o.m.model)
		dst = append(dst, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
		dst = wAnthropicUsage(dst, e.usage)
		dst = sseClose(append(dst, `}}`...))
	case evBlockStart:
		dst = sseOpen(dst, "content_block_start")
		dst = append(dst, `{"type":"content_block_start","index":`...)
		dst = wjInt(dst, o.index)
		dst = append(dst, `,"content_block":`...)
		switch e.block {
		case blockText:
			dst = append(dst, `{"type":"text","text":""}`...)
		case blockThinking:
			dst = append(dst, `{"type":"thinking","thinking":"","signature":""}`...)
		case blockRedacted:
			dst = append(dst, `{"type":"redacted_thinking","data":`...)
			dst = wjLitOr(dst, e.raw, `""`)
			dst = append(dst, '}')
		case blockTool:
			dst = append(dst, `{"type":"tool_use","id":`...)
			dst = wjLitOr(dst, e.id, `""`)
			dst = append(dst, `,"name":`...)
			dst = wjLitOr(dst, e.name, `""`)
			dst = append(dst, `,"input":{}}`...)
		}
		dst = sseClose(append(dst, '}'))
	case evDelta:
		dst = sseOpen(dst, "content_block_delta")
		dst = append(dst, `{"type":"content_block_delta","index":`...)
		dst = wjInt(dst, o.index)
		switch e.delta {
		case deltaText:
			dst = append(dst, `,"delta":{"type":"text_delta","text":`...)
		case deltaThinking:
			dst = append(dst, `,"delta":{"type":"thinking_delta","thinking":`...)
		case deltaSignature:
			dst = append(dst, `,"delta":{"type":"signature_delta","signature":`...)
		case deltaArgs:
			dst = append(dst, `,"delta":{"type":"input_json_delta","partial_json":`...)
		}
		dst = append(dst, e.raw...)
		dst = sseClose(append(dst, `}}`...))
	case evBlockStop:
		dst = sseOpen(dst, "content_block_stop")
		dst = append(dst, `{"type":"content_block_stop","index":`...)
		dst = wjInt(dst, o.index)
		dst = sseClose(append(dst, '}'))
		o.index++
	case evFinish:
		dst = sseOpen(dst, "message_delta")
		dst = append(dst, `{"type":"message_delta","delta":{"stop_reason":`...)
		dst = wjStr(dst, e.stop.anthropic())
		dst = append(dst, `,"stop_sequence":`...)
		dst = wjLitOr(dst, e.stopSeq, "null")
		dst = append(dst, `},"usage":`...)
		dst = wAnthropicUsage(dst, e.usage)
		dst = sseClose(append(dst, '}'))
		dst = sseOpen(dst, "message_stop")
		dst = sseClose(append(dst, `{"type":"message_stop"}`...))
	case evError:
		dst = append(dst, protocol.ErrorEvent(protocol.Anthropic, e.status, e.msg)...)
	}
	return dst
}
