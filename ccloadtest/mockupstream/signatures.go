package mockupstream

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// Reasoning signatures as the providers treat them (Options.Signer). A
// provider signs the reasoning it returns and verifies, on every later
// request, each signature the conversation carries: one it did not make is
// a 400 with its own error text. So is, on Anthropic with thinking on, a
// tool loop whose assistant turn does not start with signed thinking, and
// on Gemini 3 a function call of the current turn without a signature.
// A gateway that sends a provider another's signature fails here the way
// it would in production.

const sigPrefix = "mock-signature|"

// mint is the signature a Signer mock puts on the reasoning of response
// seq: standard base64 for Anthropic and Gemini (whose signatures are),
// and for Responses a Fernet-like token in the URL-safe alphabet, as
// OpenAI's encrypted_content is.
func mint(family, signer string, seq int) string {
	payload := fmt.Sprintf("%s%s|%s|%d", sigPrefix, signer, family, seq)
	if family == Responses {
		return "gAAAAA" + base64.URLEncoding.EncodeToString(append([]byte(payload), 0xfb, 0xff))
	}
	return base64.StdEncoding.EncodeToString([]byte(payload))
}

// signedBy reports whether sig is a signature signer minted for family.
func signedBy(sig, family, signer string) bool {
	var b []byte
	var err error
	if family == Responses {
		rest, ok := strings.CutPrefix(sig, "gAAAAA")
		if !ok {
			return false
		}
		b, err = base64.URLEncoding.DecodeString(rest)
	} else {
		b, err = base64.StdEncoding.DecodeString(sig)
	}
	return err == nil && strings.HasPrefix(string(b), sigPrefix+signer+"|"+family+"|")
}

// checkSignatures returns the error body and false when the request
// carries a signature this mock did not sign, or breaks the family's rules
// for reasoning in tool loops.
func (s *Server) checkSignatures(family string, body []byte, model string) ([]byte, bool) {
	signer := s.opts.Signer
	switch family {
	case Anthropic:
		if msg := anthropicSignatureError(body, signer); msg != "" {
			return errorBody(Anthropic, 400, msg), false
		}
	case Responses:
		for i, it := range gjson.GetBytes(body, "input").Array() {
			ec := it.Get("encrypted_content").Str
			if it.Get("type").Str == "reasoning" && ec != "" && !signedBy(ec, Responses, signer) {
				id := it.Get("id").Str
				if id == "" {
					id = fmt.Sprintf("input[%d]", i)
				}
				code := "invalid_encrypted_content"
				return jsonOf(struct {
					Error openAIErr `json:"error"`
				}{openAIErr{
					Message: "The encrypted content for item " + id + " could not be verified. Reason: Encrypted content could not be decrypted or parsed.",
					Type:    "invalid_request_error", Code: &code,
				}}), false
			}
		}
	case Gemini:
		if msg := geminiSignatureError(body, signer, model); msg != "" {
			return errorBody(Gemini, 400, msg), false
		}
	}
	return nil, true
}

func anthropicSignatureError(body []byte, signer string) string {
	msgs := gjson.GetBytes(body, "messages").Array()
	last := -1
	for i, m := range msgs {
		if m.Get("role").Str != "assistant" {
			continue
		}
		last = i
		for j, b := range m.Get("content").Array() {
			switch b.Get("type").Str {
			case "thinking":
				if !signedBy(b.Get("signature").Str, Anthropic, signer) {
					return fmt.Sprintf("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
				}
			case "redacted_thinking":
				if !signedBy(b.Get("data").Str, Anthropic, signer) {
					return fmt.Sprintf("messages.%d.content.%d: Invalid `data` in `redacted_thinking` block", i, j)
				}
			}
		}
	}
	typ := gjson.GetBytes(body, "thinking.type").Str
	if last < 0 || typ != "enabled" && typ != "adaptive" {
		return ""
	}
	content := msgs[last].Get("content").Array()
	if !msgs[last].Get(`content.#(type=="tool_use")`).Exists() || len(content) == 0 {
		return ""
	}
	first := content[0].Get("type").Str
	if first == "thinking" || first == "redacted_thinking" {
		return ""
	}
	return fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. "+
		"When `thinking` is enabled, a final `assistant` message must start with a thinking block "+
		"(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include "+
		"thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult "+
		"our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking", last, first)
}

// geminiSkip is the thoughtSignature Google documents for a function call
// whose real signature is unavailable.
const geminiSkip = "skip_thought_signature_validator"

func geminiSignatureError(body []byte, signer, model string) string {
	contents := gjson.GetBytes(body, "contents").Array()
	current := 0 // the current turn starts at the last user text
	for i, c := range contents {
		if c.Get("role").Str != "model" && c.Get("parts.#(text)").Exists() {
			current = i
		}
	}
	gemini3 := !strings.HasPrefix(model, "gemini-1") && !strings.HasPrefix(model, "gemini-2")
	for i, c := range contents {
		if c.Get("role").Str != "model" {
			continue
		}
		firstCall := true
		for j, p := range c.Get("parts").Array() {
			sig := p.Get("thoughtSignature").Str
			if sig == "" {
				sig = p.Get("thought_signature").Str
			}
			if sig != "" && sig != geminiSkip && !signedBy(sig, Gemini, signer) {
				return "Corrupted thought signature."
			}
			fc := p.Get("functionCall")
			if !fc.Exists() {
				continue
			}
			if firstCall && gemini3 && i > current && sig == "" {
				return fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. This is required "+
					"for tools to work correctly, and missing thought_signature may lead to degraded model performance. "+
					"Additional data, function call `default_api:%s` , position %d. Please refer to "+
					"https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", fc.Get("name").Str, j+1)
			}
			firstCall = false
		}
	}
	return ""
}

// SignedBy reports whether sig is a signature a mock with Options.Signer
// signer minted for family (tests check where a signature went).
func SignedBy(sig, family, signer string) bool { return signedBy(sig, family, signer) }
