package request

import (
	"strconv"
)

// encodeResponses writes a Responses API request. It is stateless: store is
// false and, when reasoning is on, encrypted reasoning is requested so the
// next turn can carry it back (doc.go).
func encodeResponses(r *Req) ([]byte, error) {
	w := newWriter(estimateSize(r))
	w.obj()
	w.kstr("model", r.Model)
	respEncodeInput(w, r)
	w.offerTools(r, &responsesTool)
	if r.MaxTokens > 0 {
		w.kint("max_output_tokens", r.MaxTokens)
	}
	w.kopt("temperature", r.Temperature)
	w.kopt("top_p", r.TopP)
	respEncodeReasoning(w, r)
	respEncodeText(w, r)
	w.kbool("store", false)
	if r.Reasoning.set() && r.Reasoning.effort() != "none" {
		w.kraw("include", `["reasoning.encrypted_content"]`)
	}
	if r.Stream {
		w.kbool("stream", true)
	}
	w.endObj()
	return w.b, nil
}

// respEncodeInput writes instructions and input. The first instruction is
// instructions, the others developer messages ahead of the conversation,
// as Codex sends them.
func respEncodeInput(w *writer, r *Req) {
	if len(r.System) > 0 {
		w.kstr("instructions", r.System[0])
	}
	w.key("input")
	w.arr()
	for _, s := range r.System[min(1, len(r.System)):] {
		respMsgItem(w, "developer", []Part{{Kind: PartText, Text: s}})
	}
	custom := make(map[string]bool)
	reasoningN := 0
	for i := range r.Msgs {
		m := &r.Msgs[i]
		switch m.Role {
		case RoleSystem:
			respMsgItem(w, "developer", m.Parts)
		case RoleAssistant:
			respAssistant(w, m, custom, &reasoningN)
		default:
			respUser(w, m, custom)
		}
	}
	w.endArr()
}

// respEncodeReasoning writes reasoning: the effort and the summary asked.
func respEncodeReasoning(w *writer, r *Req) {
	effort := r.Reasoning.effort()
	if effort == "" && r.Reasoning.Summary == "" {
		return
	}
	w.key("reasoning")
	w.obj()
	if effort != "" {
		w.kstr("effort", effort)
	}
	if r.Reasoning.Summary != "" {
		w.kstr("summary", r.Reasoning.Summary)
	}
	w.endObj()
}

// respEncodeText writes text: the structured output format and verbosity.
func respEncodeText(w *writer, r *Req) {
	if r.Format == nil && r.Verbosity == "" {
		return
	}
	w.key("text")
	w.obj()
	if f := r.Format; f != nil {
		w.key("format")
		w.obj()
		if f.Schema == "" {
			w.kstr("type", "json_object")
		} else {
			w.kstr("type", "json_schema")
			w.schemaFormat(f)
		}
		w.endObj()
	}
	if r.Verbosity != "" {
		w.kstr("verbosity", r.Verbosity)
	}
	w.endObj()
}

func respMsgItem(w *writer, role string, parts []Part) {
	w.obj()
	w.kstr("type", "message")
	w.kstr("role", role)
	w.key("content")
	w.arr()
	for i := range parts {
		respPart(w, &parts[i], role == "assistant")
	}
	w.endArr()
	w.endObj()
}

func respPart(w *writer, p *Part, assistant bool) {
	w.obj()
	switch p.Kind {
	case PartText:
		if assistant {
			w.kstr("type", "output_text")
		} else {
			w.kstr("type", "input_text")
		}
		w.kstr("text", p.Text)
	case PartImage:
		w.kstr("type", "input_image")
		if p.URL != "" {
			w.kstr("image_url", p.URL)
		} else {
			w.kstr("image_url", dataURL(p.MIME, p.Data))
		}
	case PartDocument:
		switch {
		case p.URL != "":
			w.kstr("type", "input_file")
			w.kstr("file_url", p.URL)
			if p.Name != "" {
				w.kstr("filename", p.Name)
			}
		case p.Data == "":
			w.kstr("type", "input_text")
			w.kstr("text", documentText(p))
		default:
			w.kstr("type", "input_file")
			w.kstr("filename", documentName(p))
			w.kstr("file_data", dataURL(p.MIME, p.Data))
		}
	}
	w.endObj()
}

func respUser(w *writer, m *Msg, custom map[string]bool) {
	start := -1
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Kind != PartToolResult {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			respMsgItem(w, "user", m.Parts[start:i])
			start = -1
		}
		w.obj()
		if custom[p.ID] {
			w.kstr("type", "custom_tool_call_output")
		} else {
			w.kstr("type", "function_call_output")
		}
		w.kstr("call_id", p.ID)
		if resultTextOnly(p) {
			w.kstr("output", resultText(p))
		} else {
			w.key("output")
			w.arr()
			if p.IsError {
				w.obj()
				w.kstr("type", "input_text")
				w.kstr("text", "Error:")
				w.endObj()
			}
			for j := range p.Content {
				respPart(w, &p.Content[j], false)
			}
			w.endArr()
		}
		w.endObj()
	}
	if start >= 0 {
		respMsgItem(w, "user", m.Parts[start:])
	}
}

func resultTextOnly(p *Part) bool {
	for i := range p.Content {
		if p.Content[i].Kind != PartText {
			return false
		}
	}
	return true
}

func respAssistant(w *writer, m *Msg, custom map[string]bool, reasoningN *int) {
	start := -1
	flush := func(end int) {
		if start >= 0 {
			respMsgItem(w, "assistant", m.Parts[start:end])
			start = -1
		}
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Kind {
		case PartText:
			if p.Text != "" && start < 0 {
				start = i
			}
			continue
		case PartToolCall:
			flush(i)
			w.obj()
			if p.Custom {
				custom[p.ID] = true
				w.kstr("type", "custom_tool_call")
				w.kstr("call_id", p.ID)
				w.kstr("name", p.Name)
				w.kstr("input", p.Input)
			} else {
				w.kstr("type", "function_call")
				w.kstr("call_id", p.ID)
				w.kstr("name", p.Name)
				w.kstr("arguments", p.callArgs())
			}
			w.endObj()
		case PartThinking:
			flush(i)
			if p.Sig == "" {
				continue // reasoning the upstream cannot verify (doc.go)
			}
			w.obj()
			w.kstr("type", "reasoning")
			id := p.ID
			if id == "" {
				*reasoningN++
				id = "rs_ccload_" + strconv.Itoa(*reasoningN)
			}
			w.kstr("id", id)
			w.key("summary")
			w.arr()
			if p.Text != "" {
				w.obj()
				w.kstr("type", "summary_text")
				w.kstr("text", p.Text)
				w.endObj()
			}
			w.endArr()
			w.kstr("encrypted_content", p.Sig)
			w.endObj()
		default:
			flush(i)
		}
	}
	flush(len(m.Parts))
}
