package convert

import (
	"github.com/ccload/ccload/protocol/convert/internal/gjwalk"
	"github.com/tidwall/gjson"
)

// anthropicResponseIn reads an Anthropic Messages response. Server tool
// blocks (server_tool_use, web_search_tool_result, ...) have no equivalent
// in the other families and are left out, as in the streams.
func anthropicResponseIn(m *respMsg, r gjson.Result) error {
	m.id = r.Get("id").Str
	var err error
	gjwalk.ForEach(r.Get("content"), func(_, b gjson.Result) bool {
		switch b.Get("type").Str {
		case "text":
			m.addText(blockText, b.Get("text").Str)
		case "thinking":
			m.blocks = append(m.blocks, respBlock{kind: blockThinking, text: b.Get("thinking").Str, sig: b.Get("signature").Str})
		case "redacted_thinking":
			m.blocks = append(m.blocks, respBlock{kind: blockRedacted, text: b.Get("data").Str})
		case "tool_use":
			in := b.Get("input")
			if !in.Exists() || in.Type == gjson.Null {
				err = m.addCall(b.Get("id").Str, b.Get("name").Str, "")
			} else {
				err = m.addCall(b.Get("id").Str, b.Get("name").Str, in.Raw)
			}
		}
		return err == nil
	})
	m.stop = stopFromAnthropic(r.Get("stop_reason").Str)
	m.stopSeq = r.Get("stop_sequence").Str
	var c anthropicCounts
	c.merge(r.Get("usage"))
	m.usage = c.usage()
	return err
}

// anthropicResponseOut writes an Anthropic Messages response.
func anthropicResponseOut(dst []byte, m *respMsg, mt *meta) []byte {
	dst = append(dst, `{"id":`...)
	dst = wjStr(dst, "msg_"+mt.id)
	dst = append(dst, `,"type":"message","role":"assistant","model":`...)
	dst = wjStr(dst, mt.model)
	dst = append(dst, `,"content":[`...)
	for i, b := range m.blocks {
		if i > 0 {
			dst = append(dst, ',')
		}
		switch b.kind {
		case blockText:
			dst = append(dst, `{"type":"text","text":`...)
			dst = wjStr(dst, b.text)
		case blockThinking:
			dst = append(dst, `{"type":"thinking","thinking":`...)
			dst = wjStr(dst, b.text)
			dst = append(dst, `,"signature":`...)
			dst = wjStr(dst, b.sig)
		case blockRedacted:
			dst = append(dst, `{"type":"redacted_thinking","data":`...)
			dst = wjStr(dst, b.text)
		case blockTool:
			dst = append(dst, `{"type":"tool_use","id":`...)
			dst = wjStr(dst, b.id)
			dst = append(dst, `,"name":`...)
			dst = wjStr(dst, b.name)
			dst = append(dst, `,"input":`...)
			dst = append(dst, b.args...)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `],"stop_reason":`...)
	dst = wjStr(dst, m.stop.anthropic())
	dst = append(dst, `,"stop_sequence":`...)
	if m.stopSeq == "" {
		dst = append(dst, "null"...)
	} else {
		dst = wjStr(dst, m.stopSeq)
	}
	dst = append(dst, `,"usage":`...)
	dst = wAnthropicUsage(dst, m.usage)
	return append(dst, '}')
}
