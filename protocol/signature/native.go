package signature

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ccload/ccload/protocol"
)

// SkipValidator is Google's documented thoughtSignature for a Gemini 3
// function call whose real signature is not available: without one, Gemini
// 3 refuses a replayed call of the current turn.
const SkipValidator = "skip_thought_signature_validator"

// Native prepares a client's own-family body (native traffic, relayed
// without conversion) for the upstream to: each tagged signature goes back
// as its original when to minted it and is left out otherwise, with what the
// family's rules then need (Anthropic: thinking off when the tool loop in
// progress lost its signed thinking; Gemini 3: the sentinel on a function
// call that lost its signature). Untagged signatures are the client
// family's own and stay, unless dropAll (the retry after the upstream
// refused one) leaves out every signature. model is the upstream model
// (Gemini's sentinel is for Gemini 3 and later).
//
// A body without the tag's magic and without dropAll is returned as it is,
// without being parsed: the cost for native traffic on one channel is one
// scan for four bytes.
func Native(family protocol.Family, body []byte, to Origin, dropAll bool, model string) ([]byte, bool, error) {
	if !dropAll && !Contains(body) {
		return body, false, nil
	}
	keep := func(sig string) (string, bool) {
		if dropAll {
			return "", false
		}
		return For(sig, family, to)
	}
	switch family {
	case protocol.Anthropic:
		return nativeAnthropic(body, keep)
	case protocol.Responses:
		return nativeResponses(body, keep)
	case protocol.Gemini:
		return nativeGemini(body, keep, needsSentinel(model))
	}
	return body, false, nil
}

// edit is one change of a body at a gjson path: a deletion when del, else
// a string value.
type edit struct {
	path  string
	value string
	del   bool
}

// apply makes the edits, last first so that a deletion does not move the
// array elements an earlier path names.
func apply(body []byte, edits []edit) ([]byte, error) {
	var err error
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		if e.del {
			body, err = sjson.DeleteBytes(body, e.path)
		} else {
			body, err = sjson.SetBytes(body, e.path, e.value)
		}
		if err != nil {
			return nil, err
		}
	}
	return body, nil
}

func nativeAnthropic(body []byte, keep func(string) (string, bool)) ([]byte, bool, error) {
	var edits []edit
	msgs := gjson.GetBytes(body, "messages").Array()
	lastAssistant := -1
	loopUnsigned := false
	for i, m := range msgs {
		if m.Get("role").Str != "assistant" {
			continue
		}
		lastAssistant = i
		calls, first := false, ""
		for j, b := range m.Get("content").Array() {
			path := "messages." + strconv.Itoa(i) + ".content." + strconv.Itoa(j)
			typ := b.Get("type").Str
			field := ""
			switch typ {
			case "thinking":
				field = "signature"
			case "redacted_thinking":
				field = "data"
			case "tool_use":
				calls = true
			}
			if field != "" {
				sig := b.Get(field).Str
				if orig, ok := keep(sig); !ok {
					edits = append(edits, edit{path: path, del: true})
					continue
				} else if orig != sig {
					edits = append(edits, edit{path: path + "." + field, value: orig})
				}
			}
			if first == "" {
				first = typ
			}
		}
		loopUnsigned = calls && first != "thinking" && first != "redacted_thinking"
	}
	out, err := apply(body, edits)
	if err != nil {
		return nil, false, err
	}
	if lastAssistant >= 0 && loopUnsigned && thinkingOn(gjson.GetBytes(out, "thinking")) {
		// Anthropic refuses thinking on when the final assistant turn calls
		// a tool without starting with thinking it signed; no signed
		// thinking exists for it, so this request goes without thinking.
		if out, err = sjson.DeleteBytes(out, "thinking"); err != nil {
			return nil, false, err
		}
	}
	return out, len(edits) > 0, nil
}

func thinkingOn(t gjson.Result) bool {
	typ := t.Get("type").Str
	return typ == "enabled" || typ == "adaptive"
}

func nativeResponses(body []byte, keep func(string) (string, bool)) ([]byte, bool, error) {
	var edits []edit
	for i, it := range gjson.GetBytes(body, "input").Array() {
		if it.Get("type").Str != "reasoning" {
			continue
		}
		ec := it.Get("encrypted_content")
		if !ec.Exists() || ec.Str == "" {
			continue
		}
		path := "input." + strconv.Itoa(i)
		if orig, ok := keep(ec.Str); !ok {
			edits = append(edits, edit{path: path, del: true})
		} else if orig != ec.Str {
			edits = append(edits, edit{path: path + ".encrypted_content", value: orig})
		}
	}
	out, err := apply(body, edits)
	return out, len(edits) > 0, err
}

func nativeGemini(body []byte, keep func(string) (string, bool), sentinel bool) ([]byte, bool, error) {
	var edits []edit
	for i, c := range gjson.GetBytes(body, "contents").Array() {
		signedCall := false // the step's first call has a signature
		for j, p := range c.Get("parts").Array() {
			field := "thoughtSignature"
			sig := p.Get(field)
			if !sig.Exists() {
				field = "thought_signature"
				sig = p.Get(field)
			}
			isCall := p.Get("functionCall").Exists() || p.Get("function_call").Exists()
			if !sig.Exists() || sig.Str == SkipValidator {
				signedCall = signedCall || isCall && sig.Exists()
				continue
			}
			path := "contents." + strconv.Itoa(i) + ".parts." + strconv.Itoa(j) + "." + field
			orig, ok := keep(sig.Str)
			switch {
			case ok && orig != sig.Str:
				edits = append(edits, edit{path: path, value: orig})
			case ok:
			case isCall && sentinel && !signedCall:
				// Gemini 3 validates the first call of every step of the
				// current turn: one that lost its signature gets the
				// sentinel Google documents for calls from elsewhere.
				edits = append(edits, edit{path: path, value: SkipValidator})
			default:
				edits = append(edits, edit{path: path, del: true})
			}
			signedCall = signedCall || isCall
		}
	}
	out, err := apply(body, edits)
	return out, len(edits) > 0, err
}

// needsSentinel reports whether a Gemini model validates thought
// signatures on replayed calls (Gemini 3 and later; 1.x and 2.x do not).
func needsSentinel(model string) bool {
	m := strings.TrimPrefix(model, "models/")
	return !strings.HasPrefix(m, "gemini-1") && !strings.HasPrefix(m, "gemini-2")
}

// refusals are what the providers answer (HTTP 400) for a reasoning
// signature they did not mint, or for the history the loss of one leaves:
// OpenAI `invalid_encrypted_content` ("The encrypted content for item … could
// not be verified."), Anthropic "Invalid `signature` in `thinking` block"
// and "a final `assistant` message must start with a thinking block", Gemini
// "Corrupted thought signature." and "Function call is missing a
// thought_signature".
var refusals = []string{
	"invalid_encrypted_content",
	"encrypted content for item",
	"`signature` in `thinking` block",
	"in `redacted_thinking` block",
	"must start with a thinking block",
	"thought signature",
	"thought_signature",
}

// Refused reports whether an upstream error body names a reasoning
// signature it could not verify.
func Refused(body []byte) bool {
	s := strings.ToLower(string(body))
	for _, r := range refusals {
		if strings.Contains(s, strings.ToLower(r)) {
			return true
		}
	}
	return false
}

// Carries reports whether a client body of family holds any reasoning
// signature field (the retry without them has something to leave out).
func Carries(family protocol.Family, body []byte) bool {
	var keys []string
	switch family {
	case protocol.Anthropic:
		keys = []string{`"signature"`, `"redacted_thinking"`}
	case protocol.Responses:
		keys = []string{`"encrypted_content"`}
	case protocol.Gemini:
		keys = []string{`"thoughtSignature"`, `"thought_signature"`}
	}
	for _, k := range keys {
		if strings.Contains(string(body), k) {
			return true
		}
	}
	return false
}
