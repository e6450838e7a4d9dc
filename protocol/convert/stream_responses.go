package convert

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
)

// responsesStreamIn decodes an OpenAI Responses stream: response.created,
// then per output item output_item.added ... output_item.done (message items
// with content_part.added, output_text.delta, content_part.done; function_call
// items with function_call_arguments.delta; reasoning items with
// reasoning_summary_part.added and reasoning_summary_text.delta, and
// encrypted_content in the done item), then response.completed or
// response.incomplete with the usage; response.failed and error fail the
// stream. A custom_tool_call item is a call whose arguments are {"input": …}
// (custom_tool_call_input.delta feeds the input). Item kinds no other family
// has (web_search_call, ...) are skipped.
type responsesStreamIn struct {
	item     respItem
	argsSeen bool // the open function_call streamed argument deltas
	textSeen bool // the open item streamed text (message text or reasoning summary)
	parts    int  // reasoning summary parts opened in the open item
	refusal  bool
	scratch  []byte
}

type respItem uint8

const (
	respItemNone respItem = iota
	respItemMessage
	respItemCall
	respItemReasoning
	respItemCustom // custom_tool_call: a call whose arguments are {"input": …}
	respItemOther
)

// customInput sends a fragment of a custom tool call's input (a JSON string
// literal) as a fragment of its function-shape arguments {"input": "…"}:
// the literal's inner text, escaped once more.
func (d *responsesStreamIn) customInput(p *pipe, lit string) {
	if !nonEmptyLit(lit) {
		return
	}
	d.scratch = wjStr(d.scratch[:0], litInner(lit))
	p.delta(deltaArgs, bstr(d.scratch))
}

func (d *responsesStreamIn) decode(p *pipe, data, name string) error {
	typ := gjson.Get(data, "type").Str
	if typ == "" {
		typ = name
	}
	switch typ {
	case "response.created", "response.in_progress", "response.queued":
		r := gjson.Get(data, "response")
		p.start(strLit(r.Get("id")), r.Get("created_at").Int(), Usage{})
	case "response.output_item.added":
		d.itemAdded(p, gjson.Get(data, "item"))
	case "response.content_part.added":
		if d.item == respItemMessage {
			d.textSeen = true
			part := gjson.Get(data, "part")
			p.blockStart(blockText, "", "", "")
			if part.Get("type").Str == "refusal" {
				d.refusal = true
				p.delta(deltaText, strLit(part.Get("refusal")))
			} else {
				p.delta(deltaText, strLit(part.Get("text")))
			}
		}
	case "response.output_text.delta", "response.refusal.delta":
		if d.item == respItemMessage {
			d.textSeen = true
			if typ == "response.refusal.delta" {
				d.refusal = true
			}
			p.delta(deltaText, litField(data, "delta"))
		}
	case "response.content_part.done":
		if d.item == respItemMessage {
			p.blockStop()
		}
	case "response.function_call_arguments.delta":
		if d.item == respItemCall {
			d.argsSeen = true
			p.delta(deltaArgs, litField(data, "delta"))
		}
	case "response.custom_tool_call_input.delta":
		if d.item == respItemCustom {
			d.argsSeen = true
			d.customInput(p, litField(data, "delta"))
		}
	case "response.reasoning_summary_part.added":
		if d.item == respItemReasoning {
			if d.parts > 0 {
				p.delta(deltaThinking, `"\n\n"`)
			}
			d.parts++
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if d.item == respItemReasoning {
			d.textSeen = true
			p.delta(deltaThinking, litField(data, "delta"))
		}
	case "response.output_item.done":
		d.itemDone(p, gjson.Get(data, "item"))
	case "response.completed", "response.incomplete":
		r := gjson.Get(data, "response")
		stop := stopFromResponses(r.Get("status").Str, r.Get("incomplete_details.reason").Str)
		if stop == stopNone {
			stop = stopFromResponses(strings.TrimPrefix(typ, "response."), r.Get("incomplete_details.reason").Str)
		}
		if d.refusal && stop == stopEnd {
			stop = stopRefusal
		}
		p.finish(stop, "", responsesUsage(r.Get("usage")))
	case "response.failed":
		r := gjson.Get(data, "response")
		p.seen(responsesUsage(r.Get("usage")))
		status, msg := streamErrorOf(r, 500)
		return p.fail(status, msg)
	case "error":
		status, msg := streamErrorOf(gjson.Parse(data), 500)
		return p.fail(status, msg)
	}
	return nil
}

func (d *responsesStreamIn) itemAdded(p *pipe, it gjson.Result) {
	d.argsSeen, d.textSeen, d.parts = false, false, 0
	switch it.Get("type").Str {
	case "message":
		d.item = respItemMessage
	case "function_call":
		d.item = respItemCall
		p.blockStart(blockTool, strLit(it.Get("call_id")), strLit(it.Get("name")), "")
		if a := strLit(it.Get("arguments")); nonEmptyLit(a) {
			d.argsSeen = true
			p.delta(deltaArgs, a)
		}
	case "custom_tool_call":
		d.item = respItemCustom
		p.blockStart(blockTool, strLit(it.Get("call_id")), strLit(it.Get("name")), "")
		p.delta(deltaArgs, `"{\"input\":\""`)
	case "reasoning":
		d.item = respItemReasoning
		p.blockStart(blockThinking, "", "", "")
	default:
		d.item = respItemOther
	}
}

// itemDone closes the item's block. What an upstream did not stream (a
// summary, arguments or text that only the done item carries) is sent here,
// and so is the reasoning item's encrypted_content, which becomes the
// thinking block's signature.
func (d *responsesStreamIn) itemDone(p *pipe, it gjson.Result) {
	switch d.item {
	case respItemMessage:
		if !d.textSeen && p.open == blockNone {
			it.Get("content").ForEach(func(_, c gjson.Result) bool {
				switch c.Get("type").Str {
				case "output_text":
					p.blockStart(blockText, "", "", "")
					p.delta(deltaText, strLit(c.Get("text")))
				case "refusal":
					d.refusal = true
					p.blockStart(blockText, "", "", "")
					p.delta(deltaText, strLit(c.Get("refusal")))
				}
				return true
			})
		}
	case respItemCall:
		if !d.argsSeen {
			p.delta(deltaArgs, strLit(it.Get("arguments")))
		}
	case respItemCustom:
		if !d.argsSeen {
			d.customInput(p, strLit(it.Get("input")))
		}
		p.delta(deltaArgs, `"\"}"`)
	case respItemReasoning:
		if !d.textSeen {
			n := 0
			it.Get("summary").ForEach(func(_, s gjson.Result) bool {
				if lit := strLit(s.Get("text")); nonEmptyLit(lit) {
					if n > 0 {
						p.delta(deltaThinking, `"\n\n"`)
					}
					p.delta(deltaThinking, lit)
					n++
				}
				return true
			})
		}
		p.delta(deltaSignature, strLit(it.Get("encrypted_content")))
	}
	if d.item != respItemOther {
		p.blockStop()
	}
	d.item = respItemNone
}

func (d *responsesStreamIn) flush(*pipe) {}

// responsesStreamOut writes the Responses grammar: response.created and
// response.in_progress; per block one output item (text -> message with one
// output_text part, thinking -> reasoning with one summary_text part and the
// signature as encrypted_content, tool call -> function_call) from
// output_item.added to output_item.done with the delta and done events in
// between; then response.completed (or response.incomplete for max tokens
// and content filter) with the full response object and usage. Every event
// has an increasing sequence_number from 0.
type responsesStreamOut struct {
	m      *meta
	seq    int64
	out    int64     // output_index of the open item; finished items before it
	cur    blockKind // the open item's block
	item   []byte    // the open item's id literal
	acc    []byte    // escaped text of the open item: text, summary or arguments
	sig    []byte    // escaped encrypted_content of the open reasoning item
	summ   bool      // the open reasoning item has its summary part
	callID string    // literal of the open call's call_id
	name   string    // literal of the open call's name
	output []byte    // JSON of the finished items, comma separated

	origin   toolOrigin // the open call's tool in the client's terms
	reshaped bool       // origin applies (clientTools knows the name)
	custom   customArgs // the open custom tool call's arguments
}

func (o *responsesStreamOut) encode(dst []byte, e *event) []byte {
	switch e.kind {
	case evStart:
		for _, typ := range [...]string{"response.created", "response.in_progress"} {
			dst = o.open(dst, typ)
			dst = append(dst, `,"response":`...)
			dst = wResponseObject(dst, o.m, "in_progress", "", nil, nil)
			dst = o.close(dst)
		}
	case evBlockStart:
		dst = o.blockStart(dst, e)
	case evDelta:
		dst = o.delta(dst, e)
	case evBlockStop:
		dst = o.blockStop(dst)
	case evFinish:
		status, reason := e.stop.responses()
		dst = o.open(dst, "response."+status)
		dst = append(dst, `,"response":`...)
		dst = wResponseObject(dst, o.m, status, reason, o.output, &e.usage)
		dst = o.close(dst)
	case evError:
		ev := protocol.ErrorEvent(protocol.Responses, e.status, e.msg)
		// Give the error event its sequence_number like every other event.
		if i := bytes.LastIndexByte(ev, '}'); i > 0 {
			dst = append(dst, ev[:i]...)
			dst = append(dst, `,"sequence_number":`...)
			dst = wjInt(dst, o.seq)
			dst = append(dst, ev[i:]...)
			o.seq++
		} else {
			dst = append(dst, ev...)
		}
	}
	return dst
}

func (o *responsesStreamOut) blockStart(dst []byte, e *event) []byte {
	o.cur, o.summ = e.block, false
	o.acc, o.sig = o.acc[:0], o.sig[:0]
	prefix := "msg_"
	switch e.block {
	case blockThinking:
		prefix = "rs_"
	case blockRedacted:
		prefix = redactedItemPrefix
	case blockTool:
		prefix = "fc_"
		o.callID, o.name = strings.Clone(e.id), strings.Clone(e.name)
		o.origin, o.reshaped = o.m.tools[unquote(e.name)]
		if o.origin.custom {
			prefix = "ctc_"
			o.custom.reset()
		}
	}
	o.item = append(o.item[:0], '"')
	o.item = append(o.item, prefix...)
	o.item = append(o.item, o.m.id...)
	o.item = append(o.item, '_')
	o.item = wjInt(o.item, o.out)
	o.item = append(o.item, '"')

	dst = o.open(dst, "response.output_item.added")
	dst = append(dst, `,"output_index":`...)
	dst = wjInt(dst, o.out)
	dst = append(dst, `,"item":`...)
	switch e.block {
	case blockText:
		dst = append(dst, `{"id":`...)
		dst = append(dst, o.item...)
		dst = append(dst, `,"type":"message","status":"in_progress","content":[],"role":"assistant"}`...)
		dst = o.close(dst)
		dst = o.open(dst, "response.content_part.added")
		dst = o.ref(dst)
		dst = append(dst, `,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`...)
	case blockThinking, blockRedacted:
		if e.block == blockRedacted {
			o.sig = append(o.sig, litInner(e.raw)...)
		}
		dst = append(dst, `{"id":`...)
		dst = append(dst, o.item...)
		dst = append(dst, `,"type":"reasoning","summary":[]}`...)
	case blockTool:
		dst = append(dst, `{"id":`...)
		dst = append(dst, o.item...)
		if o.origin.custom {
			dst = append(dst, `,"type":"custom_tool_call","status":"in_progress","input":"","call_id":`...)
		} else {
			dst = append(dst, `,"type":"function_call","status":"in_progress","arguments":"","call_id":`...)
		}
		dst = wjLitOr(dst, o.callID, `""`)
		dst = o.callName(dst)
		dst = append(dst, '}')
	}
	return o.close(dst)
}

// callName writes the open call's "name" (and "namespace"): the client's
// own for a reshaped tool, else the upstream's.
func (o *responsesStreamOut) callName(dst []byte) []byte {
	dst = append(dst, `,"name":`...)
	if !o.reshaped {
		return wjLitOr(dst, o.name, `""`)
	}
	dst = wjStr(dst, o.origin.name)
	if o.origin.namespace != "" {
		dst = append(dst, `,"namespace":`...)
		dst = wjStr(dst, o.origin.namespace)
	}
	return dst
}

func (o *responsesStreamOut) delta(dst []byte, e *event) []byte {
	switch e.delta {
	case deltaText:
		o.acc = append(o.acc, litInner(e.raw)...)
		dst = o.open(dst, "response.output_text.delta")
		dst = o.ref(dst)
		dst = append(dst, `,"content_index":0,"delta":`...)
		dst = append(dst, e.raw...)
		dst = append(dst, `,"logprobs":[]`...)
	case deltaThinking:
		if !o.summ {
			o.summ = true
			dst = o.open(dst, "response.reasoning_summary_part.added")
			dst = o.ref(dst)
			dst = append(dst, `,"summary_index":0,"part":{"type":"summary_text","text":""}`...)
			dst = o.close(dst)
		}
		o.acc = append(o.acc, litInner(e.raw)...)
		dst = o.open(dst, "response.reasoning_summary_text.delta")
		dst = o.ref(dst)
		dst = append(dst, `,"summary_index":0,"delta":`...)
		dst = append(dst, e.raw...)
	case deltaSignature:
		o.sig = append(o.sig, litInner(e.raw)...)
		return dst
	case deltaArgs:
		if o.origin.custom {
			in := o.custom.add(unquote(e.raw))
			if in == "" {
				return dst
			}
			dst = o.open(dst, "response.custom_tool_call_input.delta")
			dst = o.ref(dst)
			dst = append(dst, `,"delta":"`...)
			dst = append(dst, in...)
			dst = append(dst, '"')
			return o.close(dst)
		}
		o.acc = append(o.acc, litInner(e.raw)...)
		dst = o.open(dst, "response.function_call_arguments.delta")
		dst = o.ref(dst)
		dst = append(dst, `,"delta":`...)
		dst = append(dst, e.raw...)
	}
	return o.close(dst)
}

// blockStop ends the open item: its done events, the item appended to the
// finished output, and output_item.done carrying it.
func (o *responsesStreamOut) blockStop(dst []byte) []byte {
	itemStart := len(o.output)
	if itemStart > 0 {
		o.output = append(o.output, ',')
		itemStart++
	}
	switch o.cur {
	case blockText:
		dst = o.textDone(dst)
	case blockThinking, blockRedacted:
		dst = o.reasoningDone(dst)
	case blockTool:
		if o.origin.custom {
			dst = o.customDone(dst)
		} else {
			dst = o.callDone(dst)
		}
	}
	dst = o.open(dst, "response.output_item.done")
	dst = append(dst, `,"output_index":`...)
	dst = wjInt(dst, o.out)
	dst = append(dst, `,"item":`...)
	dst = append(dst, o.output[itemStart:]...)
	dst = o.close(dst)
	o.out++
	o.cur = blockNone
	return dst
}

// textDone ends a message item: the text and its part done, the finished
// message.
func (o *responsesStreamOut) textDone(dst []byte) []byte {
	dst = o.open(dst, "response.output_text.done")
	dst = o.ref(dst)
	dst = append(dst, `,"content_index":0,"text":"`...)
	dst = append(dst, o.acc...)
	dst = append(dst, `","logprobs":[]`...)
	dst = o.close(dst)
	dst = o.open(dst, "response.content_part.done")
	dst = o.ref(dst)
	dst = append(dst, `,"content_index":0,"part":`...)
	dst = o.textPart(dst)
	dst = o.close(dst)
	o.output = append(o.output, `{"id":`...)
	o.output = append(o.output, o.item...)
	o.output = append(o.output, `,"type":"message","status":"completed","content":[`...)
	o.output = o.textPart(o.output)
	o.output = append(o.output, `],"role":"assistant"}`...)
	return dst
}

// reasoningDone ends a reasoning item: the summary done when there was
// one, the finished item with its encrypted_content.
func (o *responsesStreamOut) reasoningDone(dst []byte) []byte {
	if o.summ {
		dst = o.open(dst, "response.reasoning_summary_text.done")
		dst = o.ref(dst)
		dst = append(dst, `,"summary_index":0,"text":"`...)
		dst = append(dst, o.acc...)
		dst = append(dst, '"')
		dst = o.close(dst)
		dst = o.open(dst, "response.reasoning_summary_part.done")
		dst = o.ref(dst)
		dst = append(dst, `,"summary_index":0,"part":{"type":"summary_text","text":"`...)
		dst = append(dst, o.acc...)
		dst = append(dst, `"}`...)
		dst = o.close(dst)
	}
	o.output = append(o.output, `{"id":`...)
	o.output = append(o.output, o.item...)
	o.output = append(o.output, `,"type":"reasoning","summary":[`...)
	if o.summ {
		o.output = append(o.output, `{"type":"summary_text","text":"`...)
		o.output = append(o.output, o.acc...)
		o.output = append(o.output, `"}`...)
	}
	o.output = append(o.output, ']')
	if len(o.sig) > 0 {
		o.output = append(o.output, `,"encrypted_content":"`...)
		o.output = append(o.output, o.sig...)
		o.output = append(o.output, '"')
	}
	o.output = append(o.output, '}')
	return dst
}

// callDone ends a function call: the arguments done, the finished call.
func (o *responsesStreamOut) callDone(dst []byte) []byte {
	dst = o.open(dst, "response.function_call_arguments.done")
	dst = o.ref(dst)
	dst = append(dst, `,"arguments":"`...)
	dst = append(dst, o.acc...)
	dst = append(dst, '"')
	dst = o.close(dst)
	o.output = append(o.output, `{"id":`...)
	o.output = append(o.output, o.item...)
	o.output = append(o.output, `,"type":"function_call","status":"completed","arguments":"`...)
	o.output = append(o.output, o.acc...)
	o.output = append(o.output, `","call_id":`...)
	o.output = wjLitOr(o.output, o.callID, `""`)
	o.output = o.callName(o.output)
	o.output = append(o.output, '}')
	return dst
}

// customDone ends a custom tool call: the input not streamed yet (all of it
// when the arguments were not {"input": ...} first), the done event, and
// the finished item.
func (o *responsesStreamOut) customDone(dst []byte) []byte {
	input := customInput(string(o.custom.args))
	if !o.custom.streaming() && input != "" {
		dst = o.open(dst, "response.custom_tool_call_input.delta")
		dst = o.ref(dst)
		dst = append(dst, `,"delta":`...)
		dst = wjStr(dst, input)
		dst = o.close(dst)
	}
	dst = o.open(dst, "response.custom_tool_call_input.done")
	dst = o.ref(dst)
	dst = append(dst, `,"input":`...)
	dst = wjStr(dst, input)
	dst = o.close(dst)
	o.output = append(o.output, `{"id":`...)
	o.output = append(o.output, o.item...)
	o.output = append(o.output, `,"type":"custom_tool_call","status":"completed","input":`...)
	o.output = wjStr(o.output, input)
	o.output = append(o.output, `,"call_id":`...)
	o.output = wjLitOr(o.output, o.callID, `""`)
	o.output = o.callName(o.output)
	o.output = append(o.output, '}')
	return dst
}

func (o *responsesStreamOut) textPart(dst []byte) []byte {
	dst = append(dst, `{"type":"output_text","annotations":[],"logprobs":[],"text":"`...)
	dst = append(dst, o.acc...)
	return append(dst, `"}`...)
}

// open starts an event: its SSE name and {"type":...; close adds the
// sequence_number and ends it.
func (o *responsesStreamOut) open(dst []byte, typ string) []byte {
	dst = sseOpen(dst, typ)
	dst = append(dst, `{"type":"`...)
	dst = append(dst, typ...)
	return append(dst, '"')
}

func (o *responsesStreamOut) close(dst []byte) []byte {
	dst = append(dst, `,"sequence_number":`...)
	dst = wjInt(dst, o.seq)
	o.seq++
	return sseClose(append(dst, '}'))
}

// ref writes the open item's item_id and output_index.
func (o *responsesStreamOut) ref(dst []byte) []byte {
	dst = append(dst, `,"item_id":`...)
	dst = append(dst, o.item...)
	dst = append(dst, `,"output_index":`...)
	return wjInt(dst, o.out)
}

// redactedItemPrefix starts the id of a reasoning item that carries an
// Anthropic redacted_thinking block (its data is the encrypted_content), so
// the request side can tell it from a signed thinking block with no text.
const redactedItemPrefix = "rs_redacted_"

// wResponseObject writes a Responses response object. output is the JSON of
// the items, comma separated; u is nil while the response is in progress.
// Request parameters the converter does not see are written as the API
// writes their defaults.
func wResponseObject(dst []byte, m *meta, status, reason string, output []byte, u *Usage) []byte {
	dst = append(dst, `{"id":`...)
	dst = wjStr(dst, "resp_"+m.id)
	dst = append(dst, `,"object":"response","created_at":`...)
	dst = wjInt(dst, m.at)
	dst = append(dst, `,"status":`...)
	dst = wjStr(dst, status)
	dst = append(dst, `,"background":false,"error":null,"incomplete_details":`...)
	if reason == "" {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, `{"reason":`...)
		dst = wjStr(dst, reason)
		dst = append(dst, '}')
	}
	dst = append(dst, `,"instructions":null,"max_output_tokens":null,"metadata":{},"model":`...)
	dst = wjStr(dst, m.model)
	dst = append(dst, `,"output":[`...)
	dst = append(dst, output...)
	dst = append(dst, `],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"temperature":null,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":null,"truncation":"disabled","usage":`...)
	if u == nil {
		dst = append(dst, "null"...)
	} else {
		dst = wResponsesUsage(dst, *u)
	}
	return append(dst, '}')
}
