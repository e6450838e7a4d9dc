package convert

import (
	"bytes"
	"io"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
)

// checkGrammar checks a converted stream against the client family's event
// grammar, independently of the goldens: a golden written with -update could
// freeze a wrong order, this cannot. It fails the test on the first breach.
func checkGrammar(t *testing.T, f protocol.Family, out []byte) {
	t.Helper()
	var evs []*protocol.Event
	r := protocol.NewReader(bytes.NewReader(out), 0)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("grammar: %v", err)
		}
		c := *ev
		c.Name, c.Data = bytes.Clone(ev.Name), bytes.Clone(ev.Data)
		evs = append(evs, &c)
	}
	if len(evs) == 0 {
		t.Fatal("grammar: empty stream")
	}
	g := grammar{t: t, evs: evs}
	switch f {
	case protocol.Anthropic:
		g.anthropic()
	case protocol.OpenAI:
		g.chat()
	case protocol.Responses:
		g.responses()
	case protocol.Gemini:
		g.gemini()
	}
}

type grammar struct {
	t   *testing.T
	evs []*protocol.Event
}

func (g *grammar) fail(i int, format string, args ...any) {
	g.t.Helper()
	g.t.Fatalf("grammar: event %d (%s %s): "+format, append([]any{i, g.evs[i].Name, g.evs[i].Data}, args...)...)
}

// isError reports whether event i is the client's error event; it must be
// the last one.
func (g *grammar) isError(i int, f protocol.Family) bool {
	ev := g.evs[i]
	d := gjson.ParseBytes(ev.Data)
	var is bool
	switch f {
	case protocol.Anthropic, protocol.Responses:
		is = string(ev.Name) == "error" && d.Get("type").Str == "error"
	default:
		is = d.Get("error").IsObject()
	}
	if is && i != len(g.evs)-1 {
		g.fail(i, "error event is not the last event")
	}
	return is
}

func (g *grammar) anthropic() {
	g.t.Helper()
	open := -1 // index of the open block
	var kind string
	next := 0
	state := "start"
	for i, ev := range g.evs {
		if g.isError(i, protocol.Anthropic) {
			return
		}
		d := gjson.ParseBytes(ev.Data)
		typ := d.Get("type").Str
		if string(ev.Name) != typ {
			g.fail(i, "event name %q != data type %q", ev.Name, typ)
		}
		switch typ {
		case "message_start":
			if state != "start" {
				g.fail(i, "message_start not first")
			}
			m := d.Get("message")
			for _, k := range []string{"id", "model", "role", "content", "usage.input_tokens", "usage.output_tokens"} {
				if !m.Get(k).Exists() {
					g.fail(i, "message_start without message.%s", k)
				}
			}
			state = "blocks"
		case "ping":
		case "content_block_start":
			if state != "blocks" || open >= 0 {
				g.fail(i, "content_block_start while a block is open or outside the message")
			}
			if int(d.Get("index").Int()) != next {
				g.fail(i, "index %d, want %d", d.Get("index").Int(), next)
			}
			open, kind = next, d.Get("content_block.type").Str
			next++
		case "content_block_delta":
			if open < 0 || int(d.Get("index").Int()) != open {
				g.fail(i, "delta for index %d, open block %d", d.Get("index").Int(), open)
			}
			want := map[string]string{"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "thinking", "input_json_delta": "tool_use"}[d.Get("delta.type").Str]
			if want != kind {
				g.fail(i, "%s in a %s block", d.Get("delta.type").Str, kind)
			}
		case "content_block_stop":
			if open < 0 || int(d.Get("index").Int()) != open {
				g.fail(i, "stop for index %d, open block %d", d.Get("index").Int(), open)
			}
			open = -1
		case "message_delta":
			if state != "blocks" || open >= 0 {
				g.fail(i, "message_delta with an open block")
			}
			if d.Get("delta.stop_reason").Str == "" || !d.Get("usage.output_tokens").Exists() {
				g.fail(i, "message_delta without stop_reason or usage.output_tokens")
			}
			state = "delta"
		case "message_stop":
			if state != "delta" || i != len(g.evs)-1 {
				g.fail(i, "message_stop not last after message_delta")
			}
			state = "stopped"
		default:
			g.fail(i, "unknown event type %q", typ)
		}
	}
	if state != "stopped" {
		g.t.Fatalf("grammar: stream ended in state %s", state)
	}
}

func (g *grammar) chat() {
	g.t.Helper()
	var id, created, model string
	tools := 0
	finished, usage, done := false, false, false
	for i, ev := range g.evs {
		if g.isError(i, protocol.OpenAI) {
			return
		}
		if len(ev.Name) != 0 {
			g.fail(i, "chat chunks have no event name")
		}
		if string(ev.Data) == "[DONE]" {
			if i != len(g.evs)-1 || !finished {
				g.fail(i, "[DONE] not last or before finish_reason")
			}
			done = true
			continue
		}
		d := gjson.ParseBytes(ev.Data)
		if d.Get("object").Str != "chat.completion.chunk" {
			g.fail(i, "object is not chat.completion.chunk")
		}
		if i == 0 {
			id, created, model = d.Get("id").Raw, d.Get("created").Raw, d.Get("model").Raw
			if d.Get("choices.0.delta.role").Str != "assistant" {
				g.fail(i, "first chunk has no role")
			}
		} else if d.Get("id").Raw != id || d.Get("created").Raw != created || d.Get("model").Raw != model {
			g.fail(i, "id/created/model differ from the first chunk")
		}
		if d.Get("usage").IsObject() {
			if !d.Get("choices").IsArray() || len(d.Get("choices").Array()) != 0 {
				g.fail(i, "usage chunk must have choices: []")
			}
			if !finished || usage {
				g.fail(i, "usage chunk before finish_reason or twice")
			}
			usage = true
			continue
		}
		if finished {
			g.fail(i, "choice chunk after finish_reason")
		}
		ch := d.Get("choices.0")
		for _, tc := range ch.Get("delta.tool_calls").Array() {
			idx := int(tc.Get("index").Int())
			switch {
			case idx == tools:
				if tc.Get("id").Str == "" || tc.Get("type").Str != "function" || tc.Get("function.name").Str == "" {
					g.fail(i, "first fragment of tool call %d lacks id, type or name", idx)
				}
				tools++
			case idx == tools-1:
				if tc.Get("id").Exists() || tc.Get("function.name").Exists() {
					g.fail(i, "later fragment of tool call %d repeats id or name", idx)
				}
			default:
				g.fail(i, "tool call index %d, %d calls so far", idx, tools)
			}
		}
		if fr := ch.Get("finish_reason"); fr.Type == gjson.String {
			finished = true
		} else if fr.Type != gjson.Null {
			g.fail(i, "finish_reason must be null or a string")
		}
	}
	if !done {
		g.t.Fatal("grammar: no data: [DONE]")
	}
}

func (g *grammar) responses() {
	g.t.Helper()
	items := 0
	openItem, openType := "", ""
	state := "start"
	for i, ev := range g.evs {
		d := gjson.ParseBytes(ev.Data)
		if seq := d.Get("sequence_number"); !seq.Exists() || int(seq.Int()) != i {
			g.fail(i, "sequence_number %s, want %d", seq.Raw, i)
		}
		if g.isError(i, protocol.Responses) {
			return
		}
		typ := d.Get("type").Str
		if string(ev.Name) != typ {
			g.fail(i, "event name %q != data type %q", ev.Name, typ)
		}
		ref := func() {
			if d.Get("item_id").Str != openItem || int(d.Get("output_index").Int()) != items-1 || openItem == "" {
				g.fail(i, "item_id/output_index do not name the open item %s (%d)", openItem, items-1)
			}
		}
		switch typ {
		case "response.created":
			if state != "start" {
				g.fail(i, "response.created not first")
			}
			state = "created"
		case "response.in_progress":
			if state != "created" {
				g.fail(i, "response.in_progress not after response.created")
			}
			state = "items"
		case "response.output_item.added":
			if state != "items" || openItem != "" {
				g.fail(i, "output_item.added while an item is open")
			}
			if int(d.Get("output_index").Int()) != items {
				g.fail(i, "output_index %d, want %d", d.Get("output_index").Int(), items)
			}
			openItem, openType = d.Get("item.id").Str, d.Get("item.type").Str
			items++
		case "response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.content_part.done":
			ref()
			if openType != "message" {
				g.fail(i, "%s in a %s item", typ, openType)
			}
		case "response.function_call_arguments.delta", "response.function_call_arguments.done":
			ref()
			if openType != "function_call" {
				g.fail(i, "%s in a %s item", typ, openType)
			}
		case "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done":
			ref()
			if openType != "custom_tool_call" {
				g.fail(i, "%s in a %s item", typ, openType)
			}
		case "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
			"response.reasoning_summary_text.done", "response.reasoning_summary_part.done":
			ref()
			if openType != "reasoning" {
				g.fail(i, "%s in a %s item", typ, openType)
			}
		case "response.output_item.done":
			if d.Get("item.id").Str != openItem || int(d.Get("output_index").Int()) != items-1 {
				g.fail(i, "output_item.done for another item")
			}
			openItem = ""
		case "response.completed", "response.incomplete":
			if openItem != "" || i != len(g.evs)-1 {
				g.fail(i, "%s with an open item or not last", typ)
			}
			resp := d.Get("response")
			if len(resp.Get("output").Array()) != items || !resp.Get("usage").IsObject() {
				g.fail(i, "response has %d output items (want %d) or no usage", len(resp.Get("output").Array()), items)
			}
			if "response."+resp.Get("status").Str != typ {
				g.fail(i, "status %q in %s", resp.Get("status").Str, typ)
			}
			state = "done"
		default:
			g.fail(i, "unexpected event %q", typ)
		}
	}
	if state != "done" {
		g.t.Fatalf("grammar: stream ended in state %s", state)
	}
}

func (g *grammar) gemini() {
	g.t.Helper()
	for i, ev := range g.evs {
		if g.isError(i, protocol.Gemini) {
			return
		}
		if len(ev.Name) != 0 {
			g.fail(i, "Gemini chunks have no event name")
		}
		d := gjson.ParseBytes(ev.Data)
		last := i == len(g.evs)-1
		c := d.Get("candidates.0")
		if !c.Get("content.parts").IsArray() || c.Get("content.role").Str != "model" {
			g.fail(i, "chunk without candidates[0].content.parts or role model")
		}
		if c.Get("finishReason").Exists() != last || d.Get("usageMetadata").Exists() != last {
			g.fail(i, "finishReason and usageMetadata belong in the last chunk only")
		}
		for _, p := range c.Get("content.parts").Array() {
			if fc := p.Get("functionCall"); fc.Exists() && (!fc.Get("args").IsObject() || fc.Get("name").Str == "") {
				g.fail(i, "functionCall without name or object args")
			}
		}
	}
}
