package convert

import (
	"strconv"

	"github.com/ccload/ccload/protocol/convert/internal/gjwalk"
	"github.com/tidwall/gjson"
)

// chatResponseIn reads an OpenAI chat.completion. Only choices[0] is read.
// message.reasoning_content (or reasoning, as some compatible servers name
// it) becomes a thinking block before the text, as the model produced it.
func chatResponseIn(m *respMsg, r gjson.Result) error {
	m.id = r.Get("id").Str
	m.created = r.Get("created").Int()
	ch := r.Get("choices.0")
	msg := ch.Get("message")
	rc := msg.Get("reasoning_content")
	if rc.Type != gjson.String {
		rc = msg.Get("reasoning")
	}
	m.addText(blockThinking, rc.Str)
	if c := msg.Get("content"); c.IsArray() {
		gjwalk.ForEach(c, func(_, p gjson.Result) bool {
			if p.Get("type").Str == "text" {
				m.addText(blockText, p.Get("text").Str)
			}
			return true
		})
	} else {
		m.addText(blockText, c.Str)
	}
	if s := msg.Get("refusal").Str; s != "" {
		m.refusal = true
		m.addText(blockText, s)
	}
	var err error
	n := 0
	gjwalk.ForEach(msg.Get("tool_calls"), func(_, tc gjson.Result) bool {
		id := tc.Get("id").Str
		if id == "" {
			id = "call_" + strconv.Itoa(n)
		}
		n++
		err = m.addCall(id, tc.Get("function.name").Str, tc.Get("function.arguments").Str)
		return err == nil
	})
	m.stop = stopFromChat(ch.Get("finish_reason").Str)
	m.usage = chatUsage(r.Get("usage"))
	return err
}

// chatResponseOut writes an OpenAI chat.completion. Chat has one text field
// and one reasoning field: text blocks (and thinking blocks) are joined with
// a blank line; tool calls follow in order. Signatures and redacted thinking
// have no field and are not sent.
func chatResponseOut(dst []byte, m *respMsg, mt *meta) []byte {
	dst = append(dst, `{"id":`...)
	dst = wjStr(dst, "chatcmpl-"+mt.id)
	dst = append(dst, `,"object":"chat.completion","created":`...)
	dst = wjInt(dst, mt.at)
	dst = append(dst, `,"model":`...)
	dst = wjStr(dst, mt.model)
	dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	text, hasText := m.joined(blockText)
	calls := 0
	for _, b := range m.blocks {
		if b.kind == blockTool {
			calls++
		}
	}
	if hasText || calls == 0 {
		dst = wjStr(dst, text)
	} else {
		dst = append(dst, "null"...)
	}
	if thinking, ok := m.joined(blockThinking); ok {
		dst = append(dst, `,"reasoning_content":`...)
		dst = wjStr(dst, thinking)
	}
	if calls > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		n := 0
		for _, b := range m.blocks {
			if b.kind != blockTool {
				continue
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = append(dst, `{"id":`...)
			dst = wjStr(dst, b.id)
			dst = append(dst, `,"type":"function","function":{"name":`...)
			dst = wjStr(dst, b.name)
			dst = append(dst, `,"arguments":`...)
			dst = wjStr(dst, b.args)
			dst = append(dst, `}}`...)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":`...)
	dst = wjStr(dst, m.stop.chat())
	dst = append(dst, `}],"usage":`...)
	dst = wChatUsage(dst, m.usage)
	return append(dst, '}')
}
