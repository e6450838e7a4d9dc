package convert

import (
	"strconv"

	"github.com/ccload/ccload/protocol/convert/internal/gjwalk"
	"github.com/ccload/ccload/protocol/signature"

	"github.com/tidwall/gjson"
)

// GeminiCallID is the tool call id given to a Gemini functionCall that has
// none. Gemini pairs calls and responses by name and position; the other
// families need ids. The id is stable, the same name and index always give
// the same id, so the request side, converting a Gemini history, derives the
// same id for a call and for its functionResponse. index is the call's
// position among the function calls of its response, from 0. The id holds
// only [A-Za-z0-9_-], which every family accepts (Anthropic requires it).
func GeminiCallID(name string, index int) string {
	b := make([]byte, 0, 12+min(len(name), 48))
	b = append(b, "call_"...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, '_')
	for i := 0; i < len(name) && i < 48; i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b = append(b, c)
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
}

// GeminiThoughtSignature returns the thoughtSignature a Gemini client is
// sent for a signature of another family, and whether it can be sent at
// all. Gemini SDKs decode thoughtSignature as standard base64 bytes and
// reject the whole chunk when it is not. A tagged signature always can be:
// its original is encoded when it is not standard base64 (a Responses
// encrypted_content uses the URL-safe alphabet; see package signature). An
// untagged one goes out as it is when it is standard base64 and is left out
// otherwise: the client then replays the turn without it, losing the
// reasoning context, not the turn.
func GeminiThoughtSignature(sig string) (string, bool) {
	return signature.Base64(sig)
}

// geminiResponseIn reads a Gemini GenerateContentResponse (candidate 0).
// Thought parts become thinking blocks; a thoughtSignature on another part
// signs the thinking block before it or, without one, an empty thinking
// block of its own (the rule of geminiStreamIn). A functionCall without an
// id gets GeminiCallID. A prompt blocked by promptFeedback is a refusal.
func geminiResponseIn(m *respMsg, r gjson.Result) error {
	m.id = r.Get("responseId").Str
	m.created = geminiTime(r.Get("createTime").Str)
	cand := r.Get("candidates.0")
	var err error
	n := 0
	gjwalk.ForEach(cand.Get("content.parts"), func(_, part gjson.Result) bool {
		sig := part.Get("thoughtSignature").Str
		if part.Get("thought").Bool() {
			m.addText(blockThinking, part.Get("text").Str)
			m.addSig(sig)
			return true
		}
		m.addSig(sig)
		if fc := part.Get("functionCall"); fc.IsObject() {
			id := fc.Get("id").Str
			if id == "" {
				id = GeminiCallID(fc.Get("name").Str, n)
			}
			n++
			args := ""
			if a := fc.Get("args"); a.Exists() && a.Type != gjson.Null {
				args = a.Raw
			}
			err = m.addCall(id, fc.Get("name").Str, args)
			return err == nil
		}
		m.addText(blockText, part.Get("text").Str)
		return true
	})
	m.stop = stopFromGemini(cand.Get("finishReason").Str)
	if m.stop == stopNone && r.Get("promptFeedback.blockReason").Str != "" {
		m.stop = stopRefusal
	}
	m.usage = geminiUsage(r.Get("usageMetadata"))
	return err
}

// geminiResponseOut writes a Gemini GenerateContentResponse. A thinking
// block's signature goes on the next part as thoughtSignature (when
// GeminiThoughtSignature allows it), or on an empty text part at the end;
// redacted thinking has no Gemini equivalent and is not sent.
func geminiResponseOut(dst []byte, m *respMsg, mt *meta) []byte {
	dst = append(dst, `{"candidates":[{"content":{"parts":[`...)
	pending := ""
	parts := 0
	part := func() {
		if parts > 0 {
			dst = append(dst, ',')
		}
		parts++
	}
	sign := func() {
		if pending != "" {
			dst = append(dst, `,"thoughtSignature":`...)
			dst = wjStr(dst, pending)
			pending = ""
		}
	}
	for _, b := range m.blocks {
		switch b.kind {
		case blockThinking:
			if b.text != "" {
				part()
				dst = append(dst, `{"text":`...)
				dst = wjStr(dst, b.text)
				dst = append(dst, `,"thought":true}`...)
			}
			if sig, ok := GeminiThoughtSignature(b.sig); ok {
				pending = sig
			}
		case blockText:
			part()
			dst = append(dst, `{"text":`...)
			dst = wjStr(dst, b.text)
			sign()
			dst = append(dst, '}')
		case blockTool:
			part()
			dst = append(dst, `{"functionCall":{"id":`...)
			dst = wjStr(dst, b.id)
			dst = append(dst, `,"name":`...)
			dst = wjStr(dst, b.name)
			dst = append(dst, `,"args":`...)
			dst = append(dst, b.args...)
			dst = append(dst, '}')
			sign()
			dst = append(dst, '}')
		}
	}
	if pending != "" || parts == 0 {
		part()
		dst = append(dst, `{"text":""`...)
		sign()
		dst = append(dst, '}')
	}
	dst = append(dst, `],"role":"model"},"finishReason":`...)
	dst = wjStr(dst, m.stop.gemini())
	dst = append(dst, `,"index":0}],"usageMetadata":`...)
	dst = wGeminiUsage(dst, m.usage)
	dst = append(dst, `,"modelVersion":`...)
	dst = wjStr(dst, mt.model)
	dst = append(dst, `,"responseId":`...)
	dst = wjStr(dst, mt.id)
	return append(dst, '}')
}
