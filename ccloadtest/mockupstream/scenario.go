package mockupstream

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// ScenarioHeader is the request header that names scenarios.
const ScenarioHeader = "x-mock-scenario"

// scenarioNames are the scenarios DefaultReply understands, in the order the
// package comment documents them.
var scenarioNames = []string{
	"fail-400", "fail-401", "fail-429", "fail-500", "fail-529",
	"soft-error", "reset", "cut", "slow", "tool", "think", "shell",
}

// Scenarios returns the names DefaultReply understands (a fresh slice).
func Scenarios() []string { return slices.Clone(scenarioNames) }

// Texts and values the scenarios use, fixed so tests can compare them.
const (
	// ThinkText is the reasoning of the "think" scenario.
	ThinkText = "The user greets me. I will answer briefly."
	// ThinkSignature is the signature of the "think" scenario (valid base64,
	// so every family carries it unchanged).
	ThinkSignature = "bW9jay10aGlua2luZy1zaWduYXR1cmU="
	// ToolResultText answers a request whose last message is a tool result
	// in the "tool" scenario.
	ToolResultText = "The mock tool call is done."
	// ToolFallbackName is the tool the "tool" scenario calls when the
	// request declares none.
	ToolFallbackName = "mock_tool"
)

// DefaultReply is the reply used when Options.Script is nil, and a base a
// script may change: DefaultText with DefaultUsage, modified by the scenarios
// the request names (header ScenarioHeader, or a model ending in
// "mock-<scenario>"). An unknown scenario in the header gives a 400 reply.
func DefaultReply(r *Recorded) Reply {
	names, err := requestScenarios(r)
	if err != nil {
		return Reply{Status: 400, Text: err.Error()}
	}
	var rep Reply
	for _, n := range names {
		applyScenario(&rep, n, r)
	}
	return rep
}

// requestScenarios returns the scenarios r names, header first.
func requestScenarios(r *Recorded) ([]string, error) {
	var names []string
	for _, h := range r.Header.Values(ScenarioHeader) {
		for n := range strings.SplitSeq(h, ",") {
			n = strings.ToLower(strings.TrimSpace(n))
			if n == "" {
				continue
			}
			if !slices.Contains(scenarioNames, n) {
				return nil, fmt.Errorf("mock upstream: unknown %s %q (known: %s)",
					ScenarioHeader, n, strings.Join(scenarioNames, ", "))
			}
			names = append(names, n)
		}
	}
	model := strings.ToLower(r.Model)
	for _, n := range scenarioNames {
		if strings.HasSuffix(model, "mock-"+n) && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names, nil
}

func applyScenario(rep *Reply, name string, r *Recorded) {
	switch name {
	case "fail-400":
		rep.Status, rep.Text = 400, "mock upstream: scenario fail-400 (invalid request)"
	case "fail-401":
		rep.Status, rep.Text = 401, "mock upstream: scenario fail-401 (invalid API key)"
	case "fail-429":
		rep.Status, rep.Text = 429, "mock upstream: scenario fail-429 (rate limited)"
		rep.Header = map[string]string{"retry-after": "2"}
	case "fail-500":
		rep.Status, rep.Text = 500, "mock upstream: scenario fail-500 (internal error)"
	case "fail-529":
		rep.Status, rep.Text = overloadedStatus(r.Family), "mock upstream: scenario fail-529 (overloaded)"
	case "soft-error":
		status := overloadedStatus(r.Family)
		msg := "mock upstream: scenario soft-error (overloaded, sent with HTTP 200)"
		if r.Stream {
			rep.RawEvents = []string{string(errorEvent(r.Family, status, msg))}
		} else {
			rep.Raw = errorBody(r.Family, status, msg)
		}
	case "reset":
		rep.CutAfterEvents = -1
	case "cut":
		rep.CutAfterEvents = 3
	case "slow":
		rep.FirstByteDelay = 1500 * time.Millisecond
		rep.EventDelay = 150 * time.Millisecond
	case "think":
		rep.Thinking, rep.ThinkingSignature = ThinkText, ThinkSignature
	case "shell":
		applyShell(rep, r)
	case "tool":
		if lastIsToolResult(r.Family, r.Body) {
			rep.Text = ToolResultText
			return
		}
		name, custom, schema := firstTool(r.Family, r.Body)
		args := argsFromSchema(schema)
		if custom {
			args = "mock"
		}
		rep.ToolCalls = []ToolCall{{Name: name, Arguments: args, Custom: custom}}
	}
}

// overloadedStatus is the family's "overloaded" status: Anthropic's 529,
// 503 elsewhere.
func overloadedStatus(family string) int {
	if family == Anthropic {
		return 529
	}
	return 503
}

// firstTool returns the first tool the request declares, whether it is a
// Responses custom (freeform) tool, and its parameter schema.
func firstTool(family string, body []byte) (name string, custom bool, schema gjson.Result) {
	var t gjson.Result
	switch family {
	case Anthropic:
		t = gjson.GetBytes(body, "tools.0")
		return orFallback(t.Get("name").String()), false, t.Get("input_schema")
	case OpenAI:
		t = gjson.GetBytes(body, "tools.0")
		return orFallback(t.Get("function.name").String()), false, t.Get("function.parameters")
	case Responses:
		t = gjson.GetBytes(body, `tools.#(name!="")`)
		if !t.Exists() { // Codex code mode declares its tools in an input item
			t = gjson.GetBytes(body, `input.#(type=="additional_tools").tools.#(name!="")`)
		}
		return orFallback(t.Get("name").String()), t.Get("type").String() == "custom", t.Get("parameters")
	case Gemini:
		t = gjson.GetBytes(body, "tools.#.functionDeclarations|@flatten|0")
		schema = t.Get("parametersJsonSchema")
		if !schema.Exists() {
			schema = t.Get("parameters")
		}
		return orFallback(t.Get("name").String()), false, schema
	}
	return ToolFallbackName, false, gjson.Result{}
}

func orFallback(name string) string {
	if name == "" {
		return ToolFallbackName
	}
	return name
}

// lastIsToolResult reports whether the conversation ends with a tool result,
// after which the "tool" scenario answers with text.
func lastIsToolResult(family string, body []byte) bool {
	switch family {
	case Anthropic:
		return last(body, "messages").Get(`content.#(type=="tool_result")`).Exists()
	case OpenAI:
		return last(body, "messages").Get("role").String() == "tool"
	case Responses:
		return strings.HasSuffix(last(body, "input").Get("type").String(), "_call_output")
	case Gemini:
		return last(body, "contents").Get("parts.#(functionResponse)").Exists()
	}
	return false
}

// last returns the last element of the array at path, or an empty result.
func last(body []byte, path string) gjson.Result {
	a := gjson.GetBytes(body, path).Array()
	if len(a) == 0 {
		return gjson.Result{}
	}
	return a[len(a)-1]
}

// argsFromSchema builds an arguments object that satisfies the required
// properties of a JSON schema (OpenAPI upper-case types included), with
// placeholder values: "mock", 1, true, [], {} or the first enum value.
func argsFromSchema(schema gjson.Result) string {
	props := schema.Get("properties")
	b := []byte{'{'}
	for i, req := range schema.Get("required").Array() {
		key := req.String()
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(key)
		if err != nil { // a string always marshals
			continue
		}
		b = append(b, k...)
		b = append(b, ':')
		b = append(b, placeholder(props.Get(gjson.Escape(key)))...)
	}
	return string(append(b, '}'))
}

func placeholder(p gjson.Result) string {
	if e := p.Get("enum.0"); e.Exists() {
		return e.Raw
	}
	switch strings.ToLower(p.Get("type").String()) {
	case "integer", "number":
		return "1"
	case "boolean":
		return "true"
	case "array":
		return "[]"
	case "object":
		return "{}"
	}
	return `"mock"`
}
