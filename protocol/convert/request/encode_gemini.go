package request

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// encodeGemini writes a generateContent request (no model: it is in the path).
func encodeGemini(r *Req) ([]byte, error) {
	w := newWriter(estimateSize(r))
	w.obj()
	if err := gemEncodeContents(w, r); err != nil {
		return nil, err
	}
	gemEncodeSystem(w, r.System)
	w.offerTools(r, &geminiTool)
	gemGenerationConfig(w, r)
	w.endObj()
	return w.b, nil
}

// gemEncodeContents writes contents, the conversation.
func gemEncodeContents(w *writer, r *Req) error {
	w.key("contents")
	w.arr()
	e := gemEncoder{w: w, names: r.toolNames(), sentinel: gemNeedsSentinel(r.Model)}
	for i := range r.Msgs {
		if err := e.msg(&r.Msgs[i]); err != nil {
			return err
		}
	}
	e.closeContent()
	w.endArr()
	return nil
}

// gemEncodeSystem writes systemInstruction, one text part per instruction.
func gemEncodeSystem(w *writer, system []string) {
	if len(system) == 0 {
		return
	}
	w.key("systemInstruction")
	w.obj()
	w.key("parts")
	w.arr()
	for _, s := range system {
		w.obj()
		w.kstr("text", s)
		w.endObj()
	}
	w.endArr()
	w.endObj()
}

// gemNeedsSentinel reports whether the model validates thought signatures on
// replayed function calls (Gemini 3 and later; 1.x and 2.x do not).
func gemNeedsSentinel(model string) bool {
	m := strings.TrimPrefix(model, "models/")
	return !strings.HasPrefix(m, "gemini-1") && !strings.HasPrefix(m, "gemini-2")
}

func gemLegacyThinking(model string) bool {
	m := strings.TrimPrefix(model, "models/")
	return strings.HasPrefix(m, "gemini-2") || strings.HasPrefix(m, "gemini-1")
}

var gemLevels = map[string]string{"none": "MINIMAL", "minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH", "xhigh": "HIGH", "max": "HIGH"}

// gemGenerationConfig writes generationConfig when the request sets any
// of it: limits, sampling, stop sequences, the output schema, thinking.
func gemGenerationConfig(w *writer, r *Req) {
	rs := r.Reasoning
	thinking := rs.set() || rs.Summary != ""
	if r.MaxTokens == 0 && r.Temperature == "" && r.TopP == "" && r.TopK == "" && r.Seed == "" &&
		r.Presence == "" && r.Frequency == "" && len(r.Stop) == 0 && r.Format == nil && !thinking {
		return
	}
	w.key("generationConfig")
	w.obj()
	if r.MaxTokens > 0 {
		w.kint("maxOutputTokens", r.MaxTokens)
	}
	w.kopt("temperature", r.Temperature)
	w.kopt("topP", r.TopP)
	w.kopt("topK", r.TopK)
	w.kopt("seed", r.Seed)
	w.kopt("presencePenalty", r.Presence)
	w.kopt("frequencyPenalty", r.Frequency)
	w.kstrs("stopSequences", r.Stop)
	if r.Format != nil {
		w.kstr("responseMimeType", "application/json")
		if r.Format.Schema != "" {
			w.key("responseJsonSchema")
			appendSchema(w, gjson.Parse(r.Format.Schema), schemaToGemini, 0)
		}
	}
	if thinking {
		gemThinkingConfig(w, r)
	}
	w.endObj()
}

// gemThinkingConfig writes thinkingConfig: a budget for Gemini 1.x and
// 2.x models, a level for later ones (doc.go has the table).
func gemThinkingConfig(w *writer, r *Req) {
	rs := r.Reasoning
	w.key("thinkingConfig")
	w.obj()
	if rs.Summary != "" {
		w.kbool("includeThoughts", true)
	}
	if gemLegacyThinking(r.Model) {
		switch {
		case rs.Effort == "none":
			w.kint("thinkingBudget", 0)
		case rs.budget() > 0:
			w.kint("thinkingBudget", rs.budget())
		case rs.Adaptive:
			w.kint("thinkingBudget", -1)
		}
	} else if lvl := gemLevels[rs.effort()]; lvl != "" {
		w.kstr("thinkingLevel", lvl)
	}
	w.endObj()
}

// gemEncoder writes contents, merging consecutive turns of the same role
// (Gemini alternates user and model).
type gemEncoder struct {
	w        *writer
	names    map[string]string
	sentinel bool
	open     string // role of the content being written, "" if none
	sawCall  bool   // the open model content has a function call already
}

func (e *gemEncoder) openContent(role string) {
	if e.open == role {
		return
	}
	e.closeContent()
	e.w.obj()
	e.w.kstr("role", role)
	e.w.key("parts")
	e.w.arr()
	e.open, e.sawCall = role, false
}

func (e *gemEncoder) closeContent() {
	if e.open == "" {
		return
	}
	e.w.endArr()
	e.w.endObj()
	e.open = ""
}

func (e *gemEncoder) msg(m *Msg) error {
	w := e.w
	switch m.Role {
	case RoleSystem:
		e.openContent("user")
		for _, p := range m.Parts {
			w.obj()
			w.kstr("text", systemTurnText(p.Text))
			w.endObj()
		}
		return nil
	case RoleAssistant:
		e.model(m)
		return nil
	}
	e.openContent("user")
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Kind != PartToolResult {
			gemPart(w, p)
			continue
		}
		name, ok := e.names[p.ID]
		if !ok {
			return fmt.Errorf("%w: the tool result for call %q answers no tool call in the conversation; gemini needs the function name", ErrUnrepresentable, p.ID)
		}
		w.obj()
		w.key("functionResponse")
		w.obj()
		w.kstr("name", name)
		w.key("response")
		w.obj()
		var text strings.Builder
		var media []*Part
		for j := range p.Content {
			c := &p.Content[j]
			if c.Kind == PartText {
				if text.Len() > 0 {
					text.WriteByte('\n')
				}
				text.WriteString(c.Text)
			} else {
				media = append(media, c)
			}
		}
		if p.IsError {
			w.kstr("error", text.String())
		} else {
			w.kstr("output", text.String())
		}
		w.endObj()
		if len(media) > 0 {
			w.key("parts")
			w.arr()
			for _, c := range media {
				gemPart(w, c)
			}
			w.endArr()
		}
		w.endObj()
		w.endObj()
	}
	return nil
}

// model writes an assistant turn. A thinking signature goes on the first
// answer part after the thinking (where Gemini puts it: the first function
// call of a step, else the text), or on the thought itself when nothing
// follows.
func (e *gemEncoder) model(m *Msg) {
	w := e.w
	e.openContent("model")
	sig := ""
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Kind {
		case PartThinking:
			last := !gemAnswerFollows(m.Parts[i+1:])
			if p.Text == "" && !last {
				if p.Sig != "" {
					sig = p.Sig
				}
				continue
			}
			if p.Text == "" && p.Sig == "" {
				continue
			}
			w.obj()
			w.kstr("text", p.Text)
			w.key("thought")
			w.bool(true)
			if last && p.Sig != "" {
				w.kstr("thoughtSignature", p.Sig)
			} else if p.Sig != "" {
				sig = p.Sig
			}
			w.endObj()
		case PartRedacted:
			// Anthropic's encrypted thinking has no Gemini form (doc.go).
		case PartToolCall:
			w.obj()
			w.key("functionCall")
			w.obj()
			w.kstr("name", p.Name)
			w.kraw("args", p.callArgs())
			w.endObj()
			switch {
			case sig != "":
				w.kstr("thoughtSignature", sig)
			case !e.sawCall && e.sentinel:
				w.kstr("thoughtSignature", skipSignature)
			}
			sig = ""
			e.sawCall = true
			w.endObj()
		case PartText:
			if p.Text == "" && sig == "" {
				continue
			}
			w.obj()
			w.kstr("text", p.Text)
			if sig != "" {
				w.kstr("thoughtSignature", sig)
				sig = ""
			}
			w.endObj()
		default:
			gemPart(w, p)
		}
	}
}

func gemAnswerFollows(rest []Part) bool {
	for i := range rest {
		switch rest[i].Kind {
		case PartToolCall, PartText:
			return true
		}
	}
	return false
}

// gemPart writes a user-side part: text, inline media, or a text document.
func gemPart(w *writer, p *Part) {
	w.obj()
	switch {
	case p.Kind == PartText:
		w.kstr("text", p.Text)
	case p.Kind == PartDocument && p.Data == "":
		w.kstr("text", documentText(p))
	default:
		w.key("inlineData")
		w.obj()
		w.kstr("mimeType", p.MIME)
		w.kstr("data", p.Data)
		w.endObj()
	}
	w.endObj()
}
