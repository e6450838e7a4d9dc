package engine_test

import (
	"strings"
	"testing"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// preambleConfig: channel a speaks {{FAM}} and answers with a preamble then
// an error event; channel b (Anthropic) answers normally.
const preambleConfig = `version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: "{{DB}}"}
channels:
  - name: a
    priority: 10
    urls: [{url: "{{URL}}", protocols: [{{FAM}}]}]
    keys: [key-a1-000000]
    models: [m1]
  - name: b
    priority: 5
    urls: [{url: "{{URL}}", protocols: [anthropic]}]
    keys: [key-b1-000000]
    models: [m1]
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
`

// preambles are, per upstream family, a stream whose events so far only
// open the answer (no text, no tool call yet) and then carry an error.
var preambles = map[string][]string{
	"anthropic": {
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_pre1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m1\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
		"event: ping\ndata: {\"type\":\"ping\"}\n\n",
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
	},
	"openai": {
		"data: {\"id\":\"chatcmpl-pre1\",\"object\":\"chat.completion.chunk\",\"created\":1767225600,\"model\":\"m1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n",
		"data: {\"error\":{\"message\":\"The server had an error while processing your request\",\"type\":\"server_error\",\"code\":null}}\n\n",
	},
	"responses": {
		"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_pre1\",\"object\":\"response\",\"status\":\"in_progress\",\"output\":[]},\"sequence_number\":0}\n\n",
		"event: response.in_progress\ndata: {\"type\":\"response.in_progress\",\"response\":{\"id\":\"resp_pre1\",\"object\":\"response\",\"status\":\"in_progress\",\"output\":[]},\"sequence_number\":1}\n\n",
		"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"msg_pre1\",\"type\":\"message\",\"status\":\"in_progress\",\"content\":[],\"role\":\"assistant\"},\"sequence_number\":2}\n\n",
		"event: response.content_part.added\ndata: {\"type\":\"response.content_part.added\",\"item_id\":\"msg_pre1\",\"output_index\":0,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"annotations\":[],\"text\":\"\"},\"sequence_number\":3}\n\n",
		"event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"id\":\"resp_pre1\",\"object\":\"response\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"The model failed to generate a response.\"},\"output\":[]},\"sequence_number\":4}\n\n",
	},
}

// TestPreambleThenErrorFailsOver: an upstream stream that has only opened
// its answer and then fails is an error before content: the
// client has seen nothing, so the next channel answers, for an Anthropic
// and a Responses client alike.
func TestPreambleThenErrorFailsOver(t *testing.T) {
	clients := map[string]struct{ path, body, done string }{
		"anthropic": {"/v1/messages", `{"model":"m1","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "message_stop"},
		"responses": {"/v1/responses", `{"model":"m1","stream":true,"input":"hi"}`, "response.completed"},
	}
	for fam, events := range preambles {
		for cname, c := range clients {
			t.Run(fam+"_upstream_"+cname+"_client", func(t *testing.T) {
				m, u := startMock(t, mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
					if r.Key == "key-a1-000000" {
						return mockupstream.Reply{RawEvents: events}
					}
					return mockupstream.DefaultReply(r)
				}})
				g := startGateway(t, strings.NewReplacer("{{URL}}", u, "{{FAM}}", fam).Replace(preambleConfig))
				resp, body := post(t, g.URL+c.path, c.body, map[string]string{"Authorization": "Bearer " + testToken, "anthropic-version": "2023-06-01"})
				if resp.StatusCode != 200 || !strings.Contains(body, "Hello") || !strings.Contains(body, c.done) {
					t.Fatalf("status %d body\n%s", resp.StatusCode, body)
				}
				if strings.Contains(body, "pre1") || strings.Contains(body, "event: error") || strings.Contains(body, `"error":{`) {
					t.Fatalf("the failed attempt's preamble or error reached the client:\n%s", body)
				}
				var keys []string
				for _, r := range m.Requests() {
					keys = append(keys, r.Key)
				}
				if got := strings.Join(keys, ","); got != "key-a1-000000,key-b1-000000" {
					t.Fatalf("tried %s", got)
				}
				rows := g.waitLogs(t, 1)
				if rows[0].Status != 200 || rows[0].Attempts != 2 || rows[0].Channel != "b" {
					t.Fatalf("row %+v", rows[0])
				}
			})
		}
	}
}
