package request

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Flattened tool names. A Responses client (Codex) may offer tools inside a
// namespace ({"type":"namespace","name":"mcp_fs","tools":[...]}) and expects
// the calls back with the namespace beside the name; the other families only
// have flat function names. A namespaced tool is offered as the function
// FlatToolName(namespace, name). The scheme only has to fit every target's
// name rules, not to be parsed back: the way back is a lookup in the table
// the client's own request yields (clientToolsOf), which the engine hands to
// the response and stream conversions.
//
// The rules met are the intersection of the targets': OpenAI and Anthropic
// ^[a-zA-Z0-9_-]{1,64}$ (Anthropic allows 128 since 2025, OpenAI does not),
// Gemini a letter or underscore first, then letters, digits, _ . : -, at
// most 64. So: [a-zA-Z_] then [a-zA-Z0-9_-], at most 64 bytes.
const maxToolName = 64

// FlatToolName is the function name a namespaced tool is offered under:
// namespace + "__" + name when that fits the rules above as it is (Codex's
// own MCP tools look like that: mcp__server__tool); otherwise every byte
// outside [a-zA-Z0-9_-] becomes "_", a leading digit or dash gets a "_"
// before it, and the result, cut to fit, ends in "_" and 8 hex digits of the
// SHA-256 of namespace NUL name, so two different pairs never share a name
// because their cleaned forms match. It is a pure function of the pair:
// a call replayed from history finds the same name without the tool list.
func FlatToolName(namespace, name string) string {
	raw := namespace + "__" + name
	if validToolName(raw) && !strings.Contains(namespace, "__") && !strings.Contains(name, "__") {
		return raw
	}
	b := make([]byte, 0, maxToolName)
	if raw == "" || !toolNameStart(raw[0]) {
		b = append(b, '_')
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; toolNameByte(c) {
			b = append(b, c)
		} else {
			b = append(b, '_')
		}
	}
	sum := sha256.Sum256([]byte(namespace + "\x00" + name))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(b) > maxToolName-len(suffix) {
		b = b[:maxToolName-len(suffix)]
	}
	return string(b) + suffix
}

func validToolName(s string) bool {
	if s == "" || len(s) > maxToolName || !toolNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !toolNameByte(s[i]) {
			return false
		}
	}
	return true
}

func toolNameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func toolNameByte(c byte) bool {
	return toolNameStart(c) || c == '-' || c >= '0' && c <= '9'
}
