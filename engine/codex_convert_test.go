package engine_test

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// codexConfig: one channel speaking {{FAM}}.
const codexConfig = `version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: "{{DB}}"}
channels:
  - name: up
    urls: [{url: "{{URL}}", protocols: [{{FAM}}]}]
    keys: [key-up-000000]
    models: [gpt-6.2-sol]
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
`

// codexTurn1 is Codex in code mode (CLIENTS.md): no tools field, a freeform
// exec tool inside the namespace "functions" of an additional_tools item,
// parallel_tool_calls false, verbosity low.
const codexTurn1 = `{"model":"gpt-6.2-sol","instructions":"You are Codex.","input":[
{"type":"additional_tools","role":"developer","tools":[{"type":"namespace","name":"functions","description":"","tools":[{"type":"custom","name":"exec","description":"Run JavaScript.","format":{"type":"grammar","syntax":"lark","definition":"start: /(.|\\n)+/"}}]}]},
{"type":"message","role":"user","content":[{"type":"input_text","text":"What is 1+1?"}]}],
"tool_choice":"auto","parallel_tool_calls":false,"reasoning":{"effort":"low","context":"all_turns"},"text":{"verbosity":"low"},
"store":false,"stream":true,"include":["reasoning.encrypted_content"],"prompt_cache_key":"s1","client_metadata":{"x":"y"}}`

// TestCodexCodeModeThroughEveryFamily runs Codex's code-mode tool turn and
// its second turn through an Anthropic, a Chat and a Gemini channel: the
// upstream is offered the exec tool as the function functions__exec, its
// call comes back to Codex as a custom_tool_call named exec in namespace
// functions, and the second turn's custom_tool_call_output reaches the
// upstream as a tool result.
func TestCodexCodeModeThroughEveryFamily(t *testing.T) {
	for _, fam := range []string{"anthropic", "openai", "gemini"} {
		t.Run(fam, func(t *testing.T) {
			m, u := startMock(t, mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
				if strings.Contains(string(r.Body), "RESULT-2") {
					return mockupstream.Reply{Text: "It is 2."}
				}
				return mockupstream.Reply{ToolCalls: []mockupstream.ToolCall{{ID: "call_js1", Name: "functions__exec", Arguments: `{"input":"text(1+1)"}`}}}
			}})
			g := startGateway(t, strings.NewReplacer("{{URL}}", u, "{{FAM}}", fam).Replace(codexConfig))
			hdr := map[string]string{"Authorization": "Bearer " + testToken}

			resp, body := post(t, g.URL+"/v1/responses", codexTurn1, hdr)
			if resp.StatusCode != 200 {
				t.Fatalf("first turn: status %d\n%s", resp.StatusCode, body)
			}
			done := lastEventData(t, body, "response.output_item.done")
			if done.Get("item.type").Str != "custom_tool_call" || done.Get("item.name").Str != "exec" ||
				done.Get("item.namespace").Str != "functions" || done.Get("item.input").Str != "text(1+1)" {
				t.Fatalf("first turn: want a custom_tool_call exec in functions, got %s\n%s", done.Raw, body)
			}
			if in := lastEventData(t, body, "response.custom_tool_call_input.done"); in.Get("input").Str != "text(1+1)" {
				t.Fatalf("first turn: input done %s", in.Raw)
			}
			up := string(m.Requests()[0].Body)
			if !strings.Contains(up, `"functions__exec"`) || strings.Contains(up, "namespace") {
				t.Fatalf("upstream request:\n%s", up)
			}

			id := gjson.Get(done.Raw, "item.call_id").Str
			turn2 := strings.Replace(codexTurn1, `"text":"What is 1+1?"}]}]`, `"text":"What is 1+1?"}]},
{"type":"custom_tool_call","call_id":"`+id+`","namespace":"functions","name":"exec","input":"text(1+1)"},
{"type":"custom_tool_call_output","call_id":"`+id+`","output":[{"type":"input_text","text":"RESULT-2"}]}]`, 1)
			resp, body = post(t, g.URL+"/v1/responses", turn2, hdr)
			if resp.StatusCode != 200 || !strings.Contains(body, "It is 2.") || !strings.Contains(body, "response.completed") {
				t.Fatalf("second turn: status %d\n%s", resp.StatusCode, body)
			}
			if up := string(m.Requests()[1].Body); !strings.Contains(up, `"functions__exec"`) {
				t.Fatalf("second turn upstream request has no call to functions__exec:\n%s", up)
			}

			rows := g.waitLogs(t, 2)
			notes := gjson.Get(rows[0].AttemptsJSON, "0.notes").String() + gjson.Get(rows[1].AttemptsJSON, "0.notes").String()
			if fam != "openai" && !strings.Contains(notes, "text.verbosity dropped") {
				t.Fatalf("log rows carry no conversion note: %s / %s", rows[0].AttemptsJSON, rows[1].AttemptsJSON)
			}
			if fam == "gemini" && !strings.Contains(notes, "parallel_tool_calls: false dropped") {
				t.Fatalf("gemini: no parallel note: %s", rows[0].AttemptsJSON)
			}
		})
	}
}

// lastEventData returns the data of the last SSE event named name.
func lastEventData(t *testing.T, stream, name string) gjson.Result {
	t.Helper()
	var last gjson.Result
	for _, block := range strings.Split(stream, "\n\n") {
		if !strings.HasPrefix(block, "event: "+name+"\n") {
			continue
		}
		_, data, _ := strings.Cut(block, "data: ")
		last = gjson.Parse(data)
	}
	if !last.Exists() {
		t.Fatalf("no %s event in\n%s", name, stream)
	}
	return last
}

// TestWebSearchSwitch: Codex's hosted web_search tool goes to an Anthropic
// channel as Anthropic's web search tool only when the channel sets
// web_search: true; otherwise it is left out and the log row notes it.
func TestWebSearchSwitch(t *testing.T) {
	req := `{"model":"gpt-6.2-sol","input":"news?","tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{}}},{"type":"web_search","external_web_access":true}],"stream":false}`
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "off", true: "on"}[on]
		t.Run(name, func(t *testing.T) {
			m, u := startMock(t, mockupstream.Options{})
			cfg := strings.NewReplacer("{{URL}}", u, "{{FAM}}", "anthropic").Replace(codexConfig)
			if on {
				cfg = strings.Replace(cfg, "    models: [gpt-6.2-sol]\n", "    models: [gpt-6.2-sol]\n    web_search: true\n", 1)
			}
			g := startGateway(t, cfg)
			resp, body := post(t, g.URL+"/v1/responses", req, map[string]string{"Authorization": "Bearer " + testToken})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d %s", resp.StatusCode, body)
			}
			tools := gjson.GetBytes(m.Requests()[0].Body, "tools.#.type").String()
			hasSearch := strings.Contains(tools, "web_search_20250305")
			if hasSearch != on {
				t.Fatalf("upstream tool types %s (want web search: %v)", tools, on)
			}
			notes := gjson.Get(g.waitLogs(t, 1)[0].AttemptsJSON, "0.notes").String()
			if wantNote := !on; strings.Contains(notes, "web_search") != wantNote {
				t.Fatalf("notes %s (want a web_search note: %v)", notes, wantNote)
			}
		})
	}
}
