package convert

import (
	"strconv"
	"strings"

	"github.com/ccload/ccload/protocol/convert/internal/gjwalk"
	"github.com/tidwall/gjson"
)

// responsesResponseIn reads an OpenAI Responses response object. Message
// items give text, reasoning items a thinking block (summary parts joined
// with a blank line, or the raw reasoning_text content when there is no
// summary; encrypted_content is the signature), function_call items tool
// calls, custom_tool_call items calls with {"input": …} (the function shape
// of a custom tool). Other item kinds (web_search_call, ...) have no
// equivalent in the other families and are left out.
func responsesResponseIn(m *respMsg, r gjson.Result) error {
	m.id = r.Get("id").Str
	m.created = r.Get("created_at").Int()
	var err error
	gjwalk.ForEach(r.Get("output"), func(_, it gjson.Result) bool {
		switch it.Get("type").Str {
		case "message":
			gjwalk.ForEach(it.Get("content"), func(_, c gjson.Result) bool {
				switch c.Get("type").Str {
				case "output_text":
					m.addText(blockText, c.Get("text").Str)
				case "refusal":
					m.refusal = true
					m.addText(blockText, c.Get("refusal").Str)
				}
				return true
			})
		case "reasoning":
			text := joinTexts(it.Get("summary"), "summary_text")
			if text == "" {
				text = joinTexts(it.Get("content"), "reasoning_text")
			}
			m.blocks = append(m.blocks, respBlock{kind: blockThinking, text: text, sig: it.Get("encrypted_content").Str})
		case "function_call":
			err = m.addCall(it.Get("call_id").Str, it.Get("name").Str, it.Get("arguments").Str)
		case "custom_tool_call":
			// In the function shape the other families offer it in.
			err = m.addCall(it.Get("call_id").Str, it.Get("name").Str, string(wjStr([]byte(`{"input":`), it.Get("input").Str))+"}")
		}
		return err == nil
	})
	m.stop = stopFromResponses(r.Get("status").Str, r.Get("incomplete_details.reason").Str)
	m.usage = responsesUsage(r.Get("usage"))
	return err
}

// joinTexts joins the text of the parts of type typ with a blank line.
func joinTexts(parts gjson.Result, typ string) string {
	var b strings.Builder
	gjwalk.ForEach(parts, func(_, p gjson.Result) bool {
		if p.Get("type").Str == typ && p.Get("text").Str != "" {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(p.Get("text").Str)
		}
		return true
	})
	return b.String()
}

// responsesResponseOut writes a Responses response object: one output item
// per block (text -> message, thinking and redacted thinking -> reasoning
// with encrypted_content, tool call -> function_call, or custom_tool_call and
// the client's own name and namespace for the tools clientToolsOf names).
func responsesResponseOut(dst []byte, m *respMsg, mt *meta) []byte {
	var out []byte
	for i, b := range m.blocks {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"id":`...)
		prefix := "msg_"
		switch b.kind {
		case blockThinking:
			prefix = "rs_"
		case blockRedacted:
			prefix = redactedItemPrefix
		case blockTool:
			prefix = "fc_"
			if mt.tools[b.name].custom {
				prefix = "ctc_"
			}
		}
		out = wjStr(out, prefix+mt.id+"_"+strconv.Itoa(i))
		switch b.kind {
		case blockText:
			out = append(out, `,"type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":`...)
			out = wjStr(out, b.text)
			out = append(out, `}],"role":"assistant"}`...)
		case blockThinking, blockRedacted:
			out = append(out, `,"type":"reasoning","summary":[`...)
			sig := b.sig
			if b.kind == blockRedacted {
				sig = b.text
			} else if b.text != "" {
				out = append(out, `{"type":"summary_text","text":`...)
				out = wjStr(out, b.text)
				out = append(out, '}')
			}
			out = append(out, ']')
			if sig != "" {
				out = append(out, `,"encrypted_content":`...)
				out = wjStr(out, sig)
			}
			out = append(out, '}')
		case blockTool:
			o, reshaped := mt.tools[b.name]
			switch {
			case reshaped && o.custom:
				out = append(out, `,"type":"custom_tool_call","status":"completed","input":`...)
				out = wjStr(out, customInput(b.args))
			default:
				out = append(out, `,"type":"function_call","status":"completed","arguments":`...)
				out = wjStr(out, b.args)
			}
			out = append(out, `,"call_id":`...)
			out = wjStr(out, b.id)
			out = append(out, `,"name":`...)
			if reshaped {
				out = wjStr(out, o.name)
				if o.namespace != "" {
					out = append(out, `,"namespace":`...)
					out = wjStr(out, o.namespace)
				}
			} else {
				out = wjStr(out, b.name)
			}
			out = append(out, '}')
		}
	}
	status, reason := m.stop.responses()
	return wResponseObject(dst, mt, status, reason, out, &m.usage)
}
