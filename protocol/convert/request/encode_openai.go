package request

import (
	"strings"
)

// encodeOpenAI writes a Chat Completions request.
func encodeOpenAI(r *Req) ([]byte, error) {
	w := newWriter(estimateSize(r))
	w.obj()
	w.kstr("model", r.Model)
	if err := chatEncodeMessages(w, r); err != nil {
		return nil, err
	}
	w.offerTools(r, &chatTool)
	if r.MaxTokens > 0 {
		w.kint("max_completion_tokens", r.MaxTokens)
	}
	w.kopt("temperature", r.Temperature)
	w.kopt("top_p", r.TopP)
	w.kopt("seed", r.Seed)
	w.kopt("presence_penalty", r.Presence)
	w.kopt("frequency_penalty", r.Frequency)
	w.kstrs("stop", r.Stop)
	if e := r.Reasoning.effort(); e != "" {
		w.kstr("reasoning_effort", e)
	}
	chatEncodeFormat(w, r.Format)
	if r.Verbosity != "" {
		w.kstr("verbosity", r.Verbosity)
	}
	if r.Stream {
		w.kbool("stream", true)
		// Always ask for usage: the engine needs it even when the client
		// did not ask (the response converter drops the extra chunk).
		w.kraw("stream_options", `{"include_usage":true}`)
	}
	w.endObj()
	return w.b, nil
}

// chatEncodeMessages writes messages: the system prompt as one system
// message, then the conversation.
func chatEncodeMessages(w *writer, r *Req) error {
	w.key("messages")
	w.arr()
	if len(r.System) > 0 {
		chatTextMsg(w, "system", r.System)
	}
	for i := range r.Msgs {
		if err := chatEncodeMsg(w, &r.Msgs[i]); err != nil {
			return err
		}
	}
	w.endArr()
	return nil
}

// chatEncodeFormat writes response_format for structured output.
func chatEncodeFormat(w *writer, f *OutputFormat) {
	if f == nil {
		return
	}
	w.key("response_format")
	w.obj()
	if f.Schema == "" {
		w.kstr("type", "json_object")
	} else {
		w.kstr("type", "json_schema")
		w.key("json_schema")
		w.obj()
		w.schemaFormat(f)
		w.endObj()
	}
	w.endObj()
}

func chatTextMsg(w *writer, role string, texts []string) {
	w.obj()
	w.kstr("role", role)
	if len(texts) == 1 {
		w.kstr("content", texts[0])
	} else {
		w.key("content")
		w.arr()
		for _, t := range texts {
			w.obj()
			w.kstr("type", "text")
			w.kstr("text", t)
			w.endObj()
		}
		w.endArr()
	}
	w.endObj()
}

func chatEncodeMsg(w *writer, m *Msg) error {
	switch m.Role {
	case RoleSystem:
		texts := make([]string, 0, len(m.Parts))
		for _, p := range m.Parts {
			texts = append(texts, p.Text)
		}
		chatTextMsg(w, "system", texts)
	case RoleAssistant:
		chatEncodeAssistant(w, m)
	default:
		// Tool results become tool messages, in order; the other parts are
		// grouped into user messages between them.
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
				chatUserMsg(w, m.Parts[start:i])
				start = -1
			}
			w.obj()
			w.kstr("role", "tool")
			w.kstr("tool_call_id", p.ID)
			w.kstr("content", resultText(p))
			w.endObj()
		}
		if start >= 0 {
			chatUserMsg(w, m.Parts[start:])
		}
	}
	return nil
}

// resultText flattens a tool result into text for families whose tool
// results are text only; an error result is marked with an "Error: " prefix
// because they have no error flag (doc.go).
func resultText(p *Part) string {
	var sb strings.Builder
	if p.IsError {
		sb.WriteString("Error: ")
	}
	for i := range p.Content {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(p.Content[i].Text)
	}
	return sb.String()
}

func chatUserMsg(w *writer, parts []Part) {
	w.obj()
	w.kstr("role", "user")
	if len(parts) == 1 && parts[0].Kind == PartText {
		w.kstr("content", parts[0].Text)
		w.endObj()
		return
	}
	w.key("content")
	w.arr()
	for i := range parts {
		p := &parts[i]
		w.obj()
		switch p.Kind {
		case PartText:
			w.kstr("type", "text")
			w.kstr("text", p.Text)
		case PartImage:
			w.kstr("type", "image_url")
			w.key("image_url")
			w.obj()
			if p.URL != "" {
				w.kstr("url", p.URL)
			} else {
				w.kstr("url", dataURL(p.MIME, p.Data))
			}
			w.endObj()
		case PartAudio:
			w.kstr("type", "input_audio")
			w.key("input_audio")
			w.obj()
			w.kstr("data", p.Data)
			f, _ := chatAudioFormat(p.MIME)
			w.kstr("format", f)
			w.endObj()
		case PartDocument:
			if p.Data == "" {
				w.kstr("type", "text")
				w.kstr("text", documentText(p))
				break
			}
			w.kstr("type", "file")
			w.key("file")
			w.obj()
			w.kstr("filename", documentName(p))
			w.kstr("file_data", dataURL(p.MIME, p.Data))
			w.endObj()
		}
		w.endObj()
	}
	w.endArr()
	w.endObj()
}

// documentText renders a plain-text document as text for families without
// text documents, keeping its title.
func documentText(p *Part) string {
	if p.Name == "" {
		return p.Text
	}
	return "[document: " + p.Name + "]\n" + p.Text
}

// documentName is the file name OpenAI wants with inline file data.
func documentName(p *Part) string {
	if p.Name != "" {
		return p.Name
	}
	if p.MIME == "application/pdf" {
		return "document.pdf"
	}
	return "document"
}

func chatEncodeAssistant(w *writer, m *Msg) {
	var texts []string
	calls := 0
	for i := range m.Parts {
		switch p := &m.Parts[i]; p.Kind {
		case PartText:
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		case PartToolCall:
			calls++
		}
	}
	if len(texts) == 0 && calls == 0 {
		return // only reasoning, which Chat cannot take back (doc.go)
	}
	w.obj()
	w.kstr("role", "assistant")
	switch len(texts) {
	case 0:
		w.kraw("content", "null")
	case 1:
		w.kstr("content", texts[0])
	default:
		w.kstr("content", strings.Join(texts, "\n\n"))
	}
	if calls > 0 {
		w.key("tool_calls")
		w.arr()
		for i := range m.Parts {
			p := &m.Parts[i]
			if p.Kind != PartToolCall {
				continue
			}
			w.obj()
			w.kstr("id", p.ID)
			// A custom tool call in its function shape (writer.tool).
			w.kstr("type", "function")
			w.key("function")
			w.obj()
			w.kstr("name", p.Name)
			w.kstr("arguments", p.callArgs())
			w.endObj()
			w.endObj()
		}
		w.endArr()
	}
	w.endObj()
}
