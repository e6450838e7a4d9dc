package convert

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
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

// toolOrigin is what a function name sent upstream stands for in the
// client's request: a tool inside a namespace, a custom (freeform) tool, or
// both.
type toolOrigin struct {
	namespace string // "" outside a namespace
	name      string // the client's own name of the tool
	custom    bool   // freeform: the call comes back as custom_tool_call with input
}

// clientTools maps the names sent upstream to their origin, for the tools
// whose calls the client expects in a shape other than a plain function
// call. nil when there are none (the common case).
type clientTools map[string]toolOrigin

// clientToolsOf reads the client's request for the tools a converted
// answer must reshape: a Responses client's namespaced and custom tools (in
// tools and in additional_tools input items). A cheap byte check skips the
// parse for the requests that have neither.
func clientToolsOf(client protocol.Family, req []byte) clientTools {
	if client != protocol.Responses || len(req) == 0 {
		return nil
	}
	if !strings.Contains(bstr(req), `"namespace"`) && !strings.Contains(bstr(req), `"custom"`) {
		return nil
	}
	var m clientTools
	add := func(ns string, t gjson.Result) {
		typ := t.Get("type").Str
		if typ != "custom" && (typ != "function" || ns == "") {
			return
		}
		if m == nil {
			m = make(clientTools)
		}
		// Clones: gjson's strings are slices of the whole request, which a
		// stream would otherwise keep alive through this map.
		name := strings.Clone(t.Get("name").Str)
		ns = strings.Clone(ns)
		flat := name
		if ns != "" {
			flat = FlatToolName(ns, name)
		}
		m[flat] = toolOrigin{namespace: ns, name: name, custom: typ == "custom"}
	}
	scan := func(tools gjson.Result) {
		forEach(tools, func(_, t gjson.Result) bool {
			if t.Get("type").Str == "namespace" {
				ns := t.Get("name").Str
				forEach(t.Get("tools"), func(_, nt gjson.Result) bool {
					add(ns, nt)
					return true
				})
				return true
			}
			add("", t)
			return true
		})
	}
	root := gjson.ParseBytes(req)
	scan(root.Get("tools"))
	forEach(root.Get("input"), func(_, it gjson.Result) bool {
		if it.Get("type").Str == "additional_tools" {
			scan(it.Get("tools"))
		}
		return true
	})
	return m
}

// customInput is the freeform input of a call to a custom tool offered as a
// function with one string argument: args is {"input": "..."}. A model that
// answered with some other object gets its single string field, or the JSON
// text itself, so nothing it wrote is lost.
func customInput(args string) string {
	a := gjson.Parse(args)
	if in := a.Get("input"); in.Type == gjson.String {
		return in.Str
	}
	var only gjson.Result
	n := 0
	forEach(a, func(_, v gjson.Result) bool {
		only = v
		n++
		return n < 2
	})
	if n == 1 && only.Type == gjson.String {
		return only.Str
	}
	return args
}
