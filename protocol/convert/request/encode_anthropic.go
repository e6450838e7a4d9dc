package request

import (
	"fmt"

	"github.com/tidwall/gjson"
)

// encodeAnthropic writes a Messages API request.
func encodeAnthropic(r *Req) ([]byte, error) {
	w := newWriter(estimateSize(r))
	w.obj()
	w.kstr("model", r.Model)
	maxTokens := r.MaxTokens
	if maxTokens == 0 {
		maxTokens = defaultAnthropicMaxTokens
	}
	w.kint("max_tokens", maxTokens)
	anthEncodeConversation(w, r)
	w.offerTools(r, &anthropicTool)
	if r.Reasoning.set() && r.Reasoning.Effort != "none" && anthUnsignedLoop(r) {
		r.note("thinking is off for this request: the tool loop in progress has no thinking signed by Anthropic before its tool call, which Anthropic requires while thinking is on")
		r.Reasoning = Reasoning{}
	}
	thinking, err := anthEncodeReasoning(w, r, maxTokens)
	if err != nil {
		return nil, err
	}
	anthEncodeSampling(w, r, thinking)
	w.kstrs("stop_sequences", r.Stop)
	if r.Stream {
		w.kbool("stream", true)
	}
	w.endObj()
	return w.b, nil
}

// anthEncodeConversation writes system (the system prompt as text blocks)
// and messages.
func anthEncodeConversation(w *writer, r *Req) {
	if len(r.System) > 0 {
		w.key("system")
		w.arr()
		for _, s := range r.System {
			if s != "" {
				anthText(w, s)
			}
		}
		w.endArr()
	}
	w.key("messages")
	w.arr()
	for i := range r.Msgs {
		anthEncodeMsg(w, &r.Msgs[i])
	}
	w.endArr()
}

// anthEncodeSampling writes the sampling knobs Anthropic takes: all of
// them with thinking off; with thinking on, which fixes temperature (1)
// and top_k, only a top_p of at least 0.95 is accepted (doc.go).
func anthEncodeSampling(w *writer, r *Req, thinking bool) {
	if !thinking {
		w.kopt("temperature", r.Temperature)
		w.kopt("top_p", r.TopP)
		w.kopt("top_k", r.TopK)
	} else if p := gjson.Parse(r.TopP); r.TopP != "" && p.Float() >= 0.95 {
		w.kraw("top_p", r.TopP)
	}
}

func anthText(w *writer, s string) {
	w.obj()
	w.kstr("type", "text")
	w.kstr("text", s)
	w.endObj()
}

func anthEncodeMsg(w *writer, m *Msg) {
	if m.Role == RoleSystem {
		// No system turns inside messages without a beta header: the
		// instruction is kept in place as a marked user turn (doc.go).
		w.obj()
		w.kstr("role", "user")
		w.key("content")
		w.arr()
		for _, p := range m.Parts {
			anthText(w, systemTurnText(p.Text))
		}
		w.endArr()
		w.endObj()
		return
	}
	if !anthHasContent(m) {
		return
	}
	w.obj()
	if m.Role == RoleAssistant {
		w.kstr("role", "assistant")
	} else {
		w.kstr("role", "user")
	}
	w.key("content")
	w.arr()
	for i := range m.Parts {
		anthEncodePart(w, &m.Parts[i])
	}
	w.endArr()
	w.endObj()
}

// anthHasContent reports whether a turn keeps a block once empty text and
// unsigned thinking are left out.
func anthHasContent(m *Msg) bool {
	for i := range m.Parts {
		if anthKeeps(&m.Parts[i]) {
			return true
		}
	}
	return false
}

func anthKeeps(p *Part) bool {
	switch p.Kind {
	case PartText:
		return p.Text != ""
	case PartThinking:
		return p.Sig != "" // Anthropic rejects thinking it did not sign
	}
	return true
}

func anthEncodePart(w *writer, p *Part) {
	if !anthKeeps(p) {
		return
	}
	switch p.Kind {
	case PartText:
		anthText(w, p.Text)
	case PartImage, PartDocument:
		anthMediaBlock(w, p)
	case PartToolCall:
		w.obj()
		w.kstr("type", "tool_use")
		w.kstr("id", anthToolID(p.ID))
		w.kstr("name", p.Name)
		w.kraw("input", p.callArgs())
		w.endObj()
	case PartToolResult:
		w.obj()
		w.kstr("type", "tool_result")
		w.kstr("tool_use_id", anthToolID(p.ID))
		if len(p.Content) == 1 && p.Content[0].Kind == PartText {
			w.kstr("content", p.Content[0].Text)
		} else if len(p.Content) > 0 {
			w.key("content")
			w.arr()
			for i := range p.Content {
				c := &p.Content[i]
				if c.Kind == PartText {
					anthText(w, c.Text)
				} else {
					anthMediaBlock(w, c)
				}
			}
			w.endArr()
		}
		if p.IsError {
			w.key("is_error")
			w.bool(true)
		}
		w.endObj()
	case PartThinking:
		w.obj()
		w.kstr("type", "thinking")
		w.kstr("thinking", p.Text)
		w.kstr("signature", p.Sig)
		w.endObj()
	case PartRedacted:
		w.obj()
		w.kstr("type", "redacted_thinking")
		w.kstr("data", p.Data)
		w.endObj()
	}
}

func anthMediaBlock(w *writer, p *Part) {
	w.obj()
	if p.Kind == PartImage {
		w.kstr("type", "image")
	} else {
		w.kstr("type", "document")
		if p.Name != "" {
			w.kstr("title", p.Name)
		}
	}
	w.key("source")
	w.obj()
	switch {
	case p.URL != "":
		w.kstr("type", "url")
		w.kstr("url", p.URL)
	case p.Kind == PartDocument && p.Data == "":
		w.kstr("type", "text")
		w.kstr("media_type", "text/plain")
		w.kstr("data", p.Text)
	default:
		w.kstr("type", "base64")
		w.kstr("media_type", p.MIME)
		w.kstr("data", p.Data)
	}
	w.endObj()
	w.endObj()
}

// anthToolID makes a tool call id acceptable to Anthropic (^[a-zA-Z0-9_-]+$).
// The mapping is a pure function, so a call and its result stay paired.
func anthToolID(id string) string {
	for i := 0; i < len(id); i++ {
		if !idChar(id[i]) {
			b := []byte(id)
			for j := i; j < len(b); j++ {
				if !idChar(b[j]) {
					b[j] = '_'
				}
			}
			return string(b)
		}
	}
	if id == "" {
		return "toolu_missing"
	}
	return id
}

func idChar(c byte) bool {
	return c == '_' || c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// anthEffort maps an effort level onto Anthropic's output_config.effort.
var anthEffort = map[string]string{"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}

// anthEncodeReasoning writes thinking and output_config and reports
// whether thinking is on. A budget becomes budget_tokens when it fits
// Anthropic's bounds (1024 <= budget < max_tokens), else the effort level of
// the budget table with adaptive thinking.
func anthEncodeReasoning(w *writer, r *Req, maxTokens int64) (bool, error) {
	rs := r.Reasoning
	effort := anthEffort[rs.Effort]
	on := true
	switch {
	case rs.Effort == "none":
		on = false
		w.key("thinking")
		w.raw(`{"type":"disabled"}`)
	case rs.Budget > 0 && rs.Effort == "" && maxTokens > 1024:
		w.key("thinking")
		w.obj()
		w.kstr("type", "enabled")
		w.kint("budget_tokens", min(max(rs.Budget, 1024), maxTokens-1))
		w.endObj()
	case rs.set():
		if effort == "" && rs.Budget > 0 {
			effort = anthEffort[budgetEffort(rs.Budget)]
		}
		w.key("thinking")
		w.obj()
		w.kstr("type", "adaptive")
		if rs.Summary != "" {
			w.kstr("display", "summarized")
		}
		w.endObj()
	default:
		on = false
	}
	if effort == "" && r.Format == nil {
		return on, nil
	}
	w.key("output_config")
	w.obj()
	if effort != "" {
		w.kstr("effort", effort)
	}
	if r.Format != nil {
		if r.Format.Schema == "" {
			return on, fmt.Errorf("%w: JSON mode without a schema cannot be sent to an anthropic upstream", ErrUnrepresentable)
		}
		w.key("format")
		w.obj()
		w.kstr("type", "json_schema")
		w.kraw("schema", r.Format.Schema)
		w.endObj()
	}
	w.endObj()
	return on, nil
}
