package mockupstream

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// The "shell" scenario drives a real agent CLI (Claude Code, Codex, Gemini
// CLI) through one tool round trip: the mock asks the client to run a shell
// command through the client's own shell tool, and then checks that the
// command's output came back. A marker in the prompt starts it, so a text
// turn on the same channel gets the default reply.
const (
	// ShellAskPrefix, followed by a nonce of lower-case letters and digits,
	// in the conversation asks for a shell tool call.
	ShellAskPrefix = "ccload-shell-"
	// ShellOutputPrefix, followed by the nonce, is what the command prints.
	// The command spells it in two pieces, so only the command's output
	// (not an echo of the command line) contains it whole.
	ShellOutputPrefix = "ccload-tool-ok-"
	// ShellSawPrefix starts the final text when the tool result carried the
	// output; ShellMissingPrefix when it did not.
	ShellSawPrefix     = "ccload mock saw "
	ShellMissingPrefix = "ccload mock did not see "
)

// shellAsk finds the nonce of the first ShellAskPrefix in a body.
var shellAsk = regexp.MustCompile(regexp.QuoteMeta(ShellAskPrefix) + `([a-z0-9]+)`)

// shellTools are the shell tools of the agent CLIs, most specific first:
// Claude Code's Bash, Gemini CLI's run_shell_command, Codex's
// exec_command, shell_command and shell, and Codex code mode's freeform
// JavaScript exec, which reaches the shell through tools.exec_command.
var shellTools = []string{"Bash", "run_shell_command", "exec_command", "shell_command", "shell", "exec"}

// ShellCommand is the command the "shell" scenario asks the client to run
// for nonce: it prints ShellOutputPrefix+nonce.
func ShellCommand(nonce string) string {
	return "printf '" + ShellOutputPrefix + "%s\\n' " + nonce
}

// shellExecJS is the code-mode program that runs the command through the
// nested exec_command tool and hands its result back as text.
func shellExecJS(nonce string) string {
	return "const r = await tools.exec_command({cmd: " + strconv.Quote(ShellCommand(nonce)) + "});\ntext(r);\n"
}

// applyShell fills rep for the "shell" scenario: a structured-output
// request (Gemini CLI's model router) gets an object satisfying its schema;
// a conversation ending in a tool result gets the verdict on it; one that
// holds ShellAskPrefix and declares a shell tool gets the call; anything
// else keeps the default reply.
func applyShell(rep *Reply, r *Recorded) {
	if schema := outputSchema(r.Family, r.Body); schema.Exists() {
		rep.Text = argsFromSchema(schema)
		return
	}
	m := shellAsk.FindSubmatch(r.Body)
	if m == nil {
		return
	}
	nonce := string(m[1])
	if lastIsToolResult(r.Family, r.Body) {
		want := ShellOutputPrefix + nonce
		if strings.Contains(lastTurn(r.Family, r.Body).Raw, want) {
			rep.Text = ShellSawPrefix + want + " in the tool result."
		} else {
			rep.Text = ShellMissingPrefix + want + " in the tool result."
		}
		return
	}
	t, ok := findShellTool(r.Family, r.Body)
	if !ok {
		return
	}
	rep.ToolCalls = []ToolCall{t.call(nonce)}
}

// outputSchema returns the JSON schema a request asks its answer to follow,
// in the family's place for it.
func outputSchema(family string, body []byte) gjson.Result {
	var paths []string
	switch family {
	case Anthropic:
		paths = []string{"output_config.format.schema", "output_format.schema"}
	case OpenAI:
		paths = []string{"response_format.json_schema.schema"}
	case Responses:
		paths = []string{"text.format.schema"}
	case Gemini:
		paths = []string{"generationConfig.responseJsonSchema", "generationConfig.responseSchema"}
	}
	for _, p := range paths {
		if v := gjson.GetBytes(body, p); v.IsObject() {
			return v
		}
	}
	return gjson.Result{}
}

// lastTurn returns the last message (or input item, or content) of a
// request.
func lastTurn(family string, body []byte) gjson.Result {
	switch family {
	case Anthropic, OpenAI:
		return last(body, "messages")
	case Responses:
		return last(body, "input")
	case Gemini:
		return last(body, "contents")
	}
	return gjson.Result{}
}

// declaredTool is one tool a request offers, in any family's shape.
type declaredTool struct {
	name      string       // as declared (a flattened namespace name included)
	namespace string       // Responses: the namespace the tool is nested in
	base      string       // the shell tool it was recognised as
	custom    bool         // freeform: the call carries plain text
	schema    gjson.Result // parameters of a function tool
}

// findShellTool returns the most specific shell tool the request declares.
func findShellTool(family string, body []byte) (declaredTool, bool) {
	tools := declaredTools(family, body)
	for _, want := range shellTools {
		for _, t := range tools {
			if shellName(t.name, want) {
				t.base = want
				return t, true
			}
		}
	}
	return declaredTool{}, false
}

// shellName reports whether name is want, or want under a namespace
// prefix ("functions.exec", "functions__exec", "mcp_shell"): conversions
// that flatten namespaces keep the tool's own name last.
func shellName(name, want string) bool {
	if name == want {
		return true
	}
	for _, sep := range []string{".", "__", "_", "-", "/", ":"} {
		if strings.HasSuffix(name, sep+want) {
			return true
		}
	}
	return false
}

// declaredTools lists a request's tools: Anthropic tools, Chat function and
// custom tools, Responses function/custom tools and those nested in
// namespaces (in tools or in additional_tools input items), Gemini
// functionDeclarations.
func declaredTools(family string, body []byte) []declaredTool {
	var out []declaredTool
	switch family {
	case Anthropic:
		for _, t := range gjson.GetBytes(body, "tools").Array() {
			out = append(out, declaredTool{name: t.Get("name").String(), schema: t.Get("input_schema")})
		}
	case OpenAI:
		for _, t := range gjson.GetBytes(body, "tools").Array() {
			if t.Get("type").String() == "custom" {
				out = append(out, declaredTool{name: t.Get("custom.name").String(), custom: true})
				continue
			}
			out = append(out, declaredTool{name: t.Get("function.name").String(), schema: t.Get("function.parameters")})
		}
	case Responses:
		var walk func(ns string, list []gjson.Result)
		walk = func(ns string, list []gjson.Result) {
			for _, t := range list {
				name := t.Get("name").String()
				switch t.Get("type").String() {
				case "namespace":
					walk(name, t.Get("tools").Array())
				case "custom":
					out = append(out, declaredTool{name: name, namespace: ns, custom: true})
				case "function":
					out = append(out, declaredTool{name: name, namespace: ns, schema: t.Get("parameters")})
				}
			}
		}
		walk("", gjson.GetBytes(body, "tools").Array())
		for _, it := range gjson.GetBytes(body, "input").Array() {
			if it.Get("type").String() == "additional_tools" {
				walk("", it.Get("tools").Array())
			}
		}
	case Gemini:
		for _, t := range gjson.GetBytes(body, "tools.#.functionDeclarations|@flatten").Array() {
			schema := t.Get("parametersJsonSchema")
			if !schema.Exists() {
				schema = t.Get("parameters")
			}
			out = append(out, declaredTool{name: t.Get("name").String(), schema: schema})
		}
	}
	return out
}

// call builds the tool call that runs ShellCommand(nonce) in t's own
// argument shape: a freeform tool gets the text itself; a function gets
// its command property ("command" or "cmd", a string or an argv array), or
// its only string property when it is a converted freeform tool; other
// required properties get placeholders.
func (t declaredTool) call(nonce string) ToolCall {
	text := ShellCommand(nonce)
	if t.base == "exec" {
		text = shellExecJS(nonce)
	}
	if t.custom {
		return ToolCall{Name: t.name, Namespace: t.namespace, Arguments: text, Custom: true}
	}
	props := t.schema.Get("properties")
	key, argv := "", false
	for _, k := range []string{"command", "cmd"} {
		if p := props.Get(k); p.Exists() {
			key, argv = k, strings.EqualFold(p.Get("type").String(), "array")
			break
		}
	}
	if key == "" { // a freeform tool converted to a function of one string
		props.ForEach(func(k, p gjson.Result) bool {
			if strings.EqualFold(p.Get("type").String(), "string") {
				key = k.String()
				return false
			}
			return true
		})
	}
	args := gjson.Parse(argsFromSchema(t.schema))
	b := []byte{'{'}
	add := func(k, raw string) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, jsonString(k)...)
		b = append(b, ':')
		b = append(b, raw...)
	}
	if key != "" {
		if argv {
			add(key, `["bash","-lc",`+jsonString(text)+`]`)
		} else {
			add(key, jsonString(text))
		}
	}
	if props.Get("description").Exists() && key != "description" {
		add("description", `"Print the ccload tool marker"`)
	}
	args.ForEach(func(k, v gjson.Result) bool {
		if k.String() != key && k.String() != "description" {
			add(k.String(), v.Raw)
		}
		return true
	})
	return ToolCall{Name: t.name, Namespace: t.namespace, Arguments: string(append(b, '}'))}
}

// jsonString encodes s as a JSON string.
func jsonString(s string) string {
	return string(jsonOf(s))
}
