package mockupstream

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// shellRec is a request naming the "shell" scenario.
func shellRec(family, body string) *Recorded {
	h := http.Header{}
	h.Set(ScenarioHeader, "shell")
	return &Recorded{Family: family, Header: h, Body: []byte(body)}
}

// TestShellCallsTheClientsShellTool: each agent CLI's shell tool, as the
// CLI declares it natively and as ccload's conversions deliver it, gets a
// call in its own argument shape.
func TestShellCallsTheClientsShellTool(t *testing.T) {
	const ask = `"Run it: ccload-shell-ab12"`
	cmd := `"printf 'ccload-tool-ok-%s\\n' ab12"`
	js := `"const r = await tools.exec_command({cmd: \"printf 'ccload-tool-ok-%s\\\\n' ab12\"});\ntext(r);\n"`
	cases := []struct {
		name, family, body string
		want               ToolCall
	}{
		{"claude code Bash", Anthropic,
			`{"messages":[{"role":"user","content":[{"type":"text","text":` + ask + `}]}],"tools":[
			 {"name":"Agent","input_schema":{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}},
			 {"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"},"timeout":{"type":"number"}},"required":["command"]}}]}`,
			ToolCall{Name: "Bash", Arguments: `{"command":` + cmd + `,"description":"Print the ccload tool marker"}`}},
		{"gemini cli run_shell_command", Gemini,
			`{"contents":[{"role":"user","parts":[{"text":` + ask + `}]}],"tools":[{"functionDeclarations":[
			 {"name":"read_file","parametersJsonSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},
			 {"name":"run_shell_command","parametersJsonSchema":{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"},"dir_path":{"type":"string"}},"required":["command"]}}]}]}`,
			ToolCall{Name: "run_shell_command", Arguments: `{"command":` + cmd + `,"description":"Print the ccload tool marker"}`}},
		{"codex exec_command", Responses,
			`{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":` + ask + `}]}],"tools":[
			 {"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"},"yield_time_ms":{"type":"number"}},"required":["cmd"]}},
			 {"type":"namespace","name":"multi_agent_v1","tools":[{"type":"function","name":"close_agent","parameters":{}}]},
			 {"type":"web_search"}]}`,
			ToolCall{Name: "exec_command", Arguments: `{"cmd":` + cmd + `}`}},
		{"codex exec_command through chat", OpenAI,
			`{"messages":[{"role":"user","content":` + ask + `}],"tools":[
			 {"type":"function","function":{"name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"},"workdir":{"type":"string"}},"required":["cmd","workdir"]}}}]}`,
			ToolCall{Name: "exec_command", Arguments: `{"cmd":` + cmd + `,"workdir":"mock"}`}},
		{"codex shell argv", Responses,
			`{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":` + ask + `}]}],"tools":[
			 {"type":"function","name":"shell","parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}},"required":["command"]}}]}`,
			ToolCall{Name: "shell", Arguments: `{"command":["bash","-lc",` + cmd + `]}`}},
		{"codex code mode additional_tools", Responses,
			`{"input":[{"type":"additional_tools","role":"developer","tools":[{"type":"namespace","name":"functions","tools":[
			   {"type":"custom","name":"exec","format":{"type":"grammar","syntax":"lark","definition":"start: /.+/"}}]}]},
			 {"type":"message","role":"user","content":[{"type":"input_text","text":` + ask + `}]}]}`,
			ToolCall{Name: "exec", Namespace: "functions", Arguments: "const r = await tools.exec_command({cmd: \"printf 'ccload-tool-ok-%s\\\\n' ab12\"});\ntext(r);\n", Custom: true}},
		{"code mode exec flattened to a function", Anthropic,
			`{"messages":[{"role":"user","content":` + ask + `}],"tools":[
			 {"name":"functions__exec","input_schema":{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}}]}`,
			ToolCall{Name: "functions__exec", Arguments: `{"input":` + js + `}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := DefaultReply(shellRec(c.family, c.body))
			if len(rep.ToolCalls) != 1 {
				t.Fatalf("reply %+v: want one tool call", rep)
			}
			got := rep.ToolCalls[0]
			if !got.Custom {
				jsonEqual(t, got.Arguments, c.want.Arguments)
				got.Arguments = c.want.Arguments
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("call\n got %#v\nwant %#v", got, c.want)
			}
		})
	}
}

// TestShellVerdict: once the conversation ends in a tool result, the reply
// says whether the command's output is in it.
func TestShellVerdict(t *testing.T) {
	cases := []struct{ name, family, body, want string }{
		{"anthropic saw", Anthropic, `{"messages":[{"role":"user","content":"ccload-shell-x1"},
			{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ccload-tool-ok-x1"}]}]}`,
			"ccload mock saw ccload-tool-ok-x1 in the tool result."},
		{"responses custom output saw", Responses, `{"input":[{"type":"message","role":"user","content":"ccload-shell-x1"},
			{"type":"custom_tool_call","call_id":"c","name":"exec","input":"..."},
			{"type":"custom_tool_call_output","call_id":"c","output":[{"type":"input_text","text":"{\"output\":\"ccload-tool-ok-x1\\n\"}"}]}]}`,
			"ccload mock saw ccload-tool-ok-x1 in the tool result."},
		{"gemini missing", Gemini, `{"contents":[{"role":"user","parts":[{"text":"ccload-shell-x1"}]},
			{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"printf 'ccload-tool-ok-%s' x1"}}}]},
			{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"command not found"}}}]}]}`,
			"ccload mock did not see ccload-tool-ok-x1 in the tool result."},
		{"chat saw", OpenAI, `{"messages":[{"role":"user","content":"ccload-shell-x1"},
			{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"exec_command","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"c","content":"Output:\nccload-tool-ok-x1\n"}]}`,
			"ccload mock saw ccload-tool-ok-x1 in the tool result."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := DefaultReply(shellRec(c.family, c.body))
			if rep.Text != c.want || len(rep.ToolCalls) != 0 {
				t.Errorf("reply %+v, want text %q", rep, c.want)
			}
		})
	}
}

// TestShellOtherRequests: without the marker the reply is the default, and
// a structured-output request (Gemini CLI's model router) gets an object
// fitting its schema.
func TestShellOtherRequests(t *testing.T) {
	rep := DefaultReply(shellRec(Anthropic, `{"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"Bash","input_schema":{}}]}`))
	if !reflect.DeepEqual(rep, Reply{}) {
		t.Errorf("unmarked request: %+v, want the default reply", rep)
	}
	rep = DefaultReply(shellRec(Gemini, `{"contents":[{"role":"user","parts":[{"text":"route"}]}],"generationConfig":{
		"responseMimeType":"application/json","responseJsonSchema":{"type":"OBJECT","properties":{
		"complexity_reasoning":{"type":"STRING"},"complexity_score":{"type":"INTEGER"}},"required":["complexity_reasoning","complexity_score"]}}}`))
	jsonEqual(t, rep.Text, `{"complexity_reasoning":"mock","complexity_score":1}`)
}

// TestShellNamespaceOnResponsesItems: a namespaced call carries its
// namespace on the Responses call item, stream and not.
func TestShellNamespaceOnResponsesItems(t *testing.T) {
	tr := &turn{rec: &Recorded{Family: Responses, Body: []byte(`{}`)}, seq: 1}
	rep := Reply{ToolCalls: []ToolCall{{Name: "exec", Namespace: "functions", Arguments: "x", Custom: true}}}
	rep = rep.normalized()
	body := string(responsesBody(tr, &rep))
	if want := `"name":"exec","namespace":"functions"`; !strings.Contains(body, want) {
		t.Errorf("body lacks %s: %s", want, body)
	}
}
