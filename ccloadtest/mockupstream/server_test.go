package mockupstream

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"
)

const (
	anthropicReq = `{"model":"claude-sonnet-4-6","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`
	chatReq      = `{"model":"gpt-5","messages":[{"role":"user","content":"hi"}]}`
	geminiReq    = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
)

func TestRequestsRecordFamilyModelKeyBody(t *testing.T) {
	s, base := start(t, Options{})
	post(t, base+"/v1/messages?beta=true", `{"model":"claude-a","max_tokens":1,"messages":[],"stream":true}`,
		"x-api-key: ant-key", "anthropic-version: 2023-06-01")
	post(t, base+"/relay/v1/chat/completions", chatReq, "Authorization: Bearer oa-key")
	post(t, base+"/backend-api/codex/responses", `{"model":"gpt-5-codex","input":"hi","stream":true}`, "Authorization: Bearer rs-key")
	post(t, base+"/v1beta/models/gemini-2.5-pro:generateContent?key=gm-key", geminiReq)

	got := s.Requests()
	want := []Recorded{
		{Family: Anthropic, Path: "/v1/messages", RawQuery: "beta=true", Model: "claude-a", Stream: true, Key: "ant-key"},
		{Family: OpenAI, Path: "/relay/v1/chat/completions", Model: "gpt-5", Key: "oa-key"},
		{Family: Responses, Path: "/backend-api/codex/responses", Model: "gpt-5-codex", Stream: true, Key: "rs-key"},
		{Family: Gemini, Path: "/v1beta/models/gemini-2.5-pro:generateContent", RawQuery: "key=gm-key", Model: "gemini-2.5-pro", Key: "gm-key"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d requests recorded, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Family != w.Family || g.Method != http.MethodPost || g.Path != w.Path || g.RawQuery != w.RawQuery ||
			g.Model != w.Model || g.Stream != w.Stream || g.Key != w.Key {
			t.Errorf("request %d = %+v, want %+v", i, g, w)
		}
	}
	if string(got[1].Body) != chatReq || got[0].Header.Get("anthropic-version") != "2023-06-01" {
		t.Errorf("body %q header %v", got[1].Body, got[0].Header)
	}

	// Requests returns copies: changing one does not change the record.
	got[1].Body[0] = 'X'
	got[1].Header.Set("x-changed", "1")
	if again := s.Requests(); again[1].Body[0] != '{' || again[1].Header.Get("x-changed") != "" {
		t.Error("Requests returned shared storage")
	}

	s.Reset()
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests after Reset", n)
	}
	// Ids restart with the records, so golden outputs are reproducible.
	body := readAll(t, post(t, base+"/v1/chat/completions", chatReq, "Authorization: Bearer k").Body)
	if id := gjson.GetBytes(body, "id").String(); id != "chatcmpl-mock000001" {
		t.Errorf("first id after Reset = %q", id)
	}
}

func TestCredentialsAndKeys(t *testing.T) {
	_, base := start(t, Options{Keys: []string{"good"}})
	tests := []struct {
		name, path, body string
		headers          []string
		status           int
		errPath, errWant string
	}{
		{"anthropic x-api-key", "/v1/messages", anthropicReq, []string{"x-api-key: good", "anthropic-version: 2023-06-01"}, 200, "", ""},
		{"anthropic bearer", "/v1/messages", anthropicReq, []string{"Authorization: Bearer good", "anthropic-version: 2023-06-01"}, 200, "", ""},
		{"anthropic wrong key", "/v1/messages", anthropicReq, []string{"x-api-key: bad", "anthropic-version: 2023-06-01"}, 401, "error.type", "authentication_error"},
		{"anthropic no version", "/v1/messages", anthropicReq, []string{"x-api-key: good"}, 400, "error.type", "invalid_request_error"},
		{"chat bearer", "/v1/chat/completions", chatReq, []string{"Authorization: Bearer good"}, 200, "", ""},
		{"chat x-api-key is not its header", "/v1/chat/completions", chatReq, []string{"x-api-key: good"}, 401, "error.code", "invalid_api_key"},
		{"chat wrong key", "/v1/chat/completions", chatReq, []string{"Authorization: Bearer bad"}, 401, "error.type", "invalid_request_error"},
		{"gemini header", "/v1beta/models/g:generateContent", geminiReq, []string{"x-goog-api-key: good"}, 200, "", ""},
		{"gemini query", "/v1beta/models/g:generateContent?key=good", geminiReq, nil, 200, "", ""},
		{"gemini wrong key", "/v1beta/models/g:generateContent?key=bad", geminiReq, nil, 401, "error.status", "UNAUTHENTICATED"},
		{"unknown path", "/v2/elsewhere", "{}", []string{"Authorization: Bearer good"}, 404, "error.type", "invalid_request_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, base+tt.path, tt.body, tt.headers...)
			body := readAll(t, resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if tt.errPath != "" && gjson.GetBytes(body, tt.errPath).String() != tt.errWant {
				t.Errorf("%s = %q, want %q in %s", tt.errPath, gjson.GetBytes(body, tt.errPath).String(), tt.errWant, body)
			}
			if strings.Contains(string(body), "bad") {
				t.Errorf("error body echoes the credential: %s", body)
			}
		})
	}
}

func TestRequestValidation(t *testing.T) {
	_, base := start(t, Options{})
	tests := []struct{ name, path, body, want string }{
		{"not json", "/v1/chat/completions", `{"model":`, "not a JSON object"},
		{"no model", "/v1/chat/completions", `{"messages":[]}`, "model"},
		{"chat no messages", "/v1/chat/completions", `{"model":"m"}`, "messages"},
		{"anthropic no max_tokens", "/v1/messages", `{"model":"m","messages":[]}`, "max_tokens"},
		{"gemini no contents", "/v1beta/models/g:generateContent", `{}`, "contents"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, base+tt.path, tt.body, "Authorization: Bearer k", "x-goog-api-key: k", "anthropic-version: 2023-06-01")
			body := readAll(t, resp.Body)
			if resp.StatusCode != 400 || !strings.Contains(string(body), tt.want) {
				t.Errorf("status %d body %s, want 400 mentioning %q", resp.StatusCode, body, tt.want)
			}
		})
	}
}

// TestStreamIsFlushedPerEvent proves the first event reaches the client
// while the server is still waiting to write the rest: with a 30 s delay
// between events, a buffering server could not deliver it within the test's
// deadline.
func TestStreamIsFlushedPerEvent(t *testing.T) {
	const delay = 30 * time.Second
	families := []struct{ name, path, body, first string }{
		{"anthropic", "/v1/messages", `{"model":"m","max_tokens":1,"messages":[],"stream":true}`, "event: message_start"},
		{"chat", "/v1/chat/completions", `{"model":"m","messages":[],"stream":true}`, `"role":"assistant"`},
		{"responses", "/v1/responses", `{"model":"m","stream":true}`, "event: response.created"},
		{"gemini", "/v1beta/models/g:streamGenerateContent?alt=sse", geminiReq, `"responseId"`},
	}
	_, base := start(t, script(Reply{EventDelay: delay}))
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			begin := time.Now()
			resp := postCtx(t, ctx, base+f.path, f.body, "Authorization: Bearer k", "x-goog-api-key: k", "anthropic-version: 2023-06-01")
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("Content-Type %q", ct)
			}
			br := bufio.NewReader(resp.Body)
			block, err := readBlock(br)
			if err != nil || !strings.Contains(block, f.first) {
				t.Fatalf("first block %q, err %v", block, err)
			}
			if took := time.Since(begin); took >= delay {
				t.Fatalf("first event took %v", took)
			}
			resp.Body.Close() // the server stops at its next write or wait
		})
	}
}

func TestDelaysAndCuts(t *testing.T) {
	t.Run("first byte delay", func(t *testing.T) {
		const d = 150 * time.Millisecond
		_, base := start(t, script(Reply{FirstByteDelay: d}))
		begin := time.Now()
		resp := post(t, base+"/v1/chat/completions", chatReq, "Authorization: Bearer k")
		if took := time.Since(begin); took < d || resp.StatusCode != 200 {
			t.Errorf("status %d after %v, want 200 after at least %v", resp.StatusCode, took, d)
		}
	})
	t.Run("cut after events", func(t *testing.T) {
		_, base := start(t, script(Reply{CutAfterEvents: 2}))
		resp := post(t, base+"/v1/messages", `{"model":"m","max_tokens":1,"messages":[],"stream":true}`,
			"x-api-key: k", "anthropic-version: 2023-06-01")
		body, err := io.ReadAll(resp.Body)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("read error %v, want unexpected EOF", err)
		}
		if blocks := sseBlocks(body); len(blocks) != 2 || !strings.HasPrefix(blocks[1], "event: content_block_start") {
			t.Errorf("got %d blocks before the cut: %q", len(blocks), blocks)
		}
	})
	t.Run("cut non-stream body", func(t *testing.T) {
		_, base := start(t, script(Reply{CutAfterEvents: 1}))
		resp := post(t, base+"/v1/chat/completions", chatReq, "Authorization: Bearer k")
		if _, err := io.ReadAll(resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("read error %v, want unexpected EOF", err)
		}
	})
	t.Run("reset before any byte", func(t *testing.T) {
		s, base := start(t, Options{})
		req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, base+"/v1/chat/completions",
			strings.NewReader(`{"model":"gpt-5-mock-reset","messages":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer k")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("got status %d, want a connection error", resp.StatusCode)
		}
		if n := len(s.Requests()); n != 1 {
			t.Errorf("%d requests recorded, want 1", n)
		}
	})
	t.Run("close ends open streams", func(t *testing.T) {
		s := New(script(Reply{EventDelay: time.Hour}))
		base, err := s.Start("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		resp := post(t, base+"/v1/chat/completions", `{"model":"m","messages":[],"stream":true}`, "Authorization: Bearer k")
		if _, err := readBlock(bufio.NewReader(resp.Body)); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(resp.Body); err == nil {
			t.Error("stream ended cleanly after Close, want a cut")
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

func TestRawReplies(t *testing.T) {
	t.Run("raw body", func(t *testing.T) {
		_, base := start(t, script(Reply{Status: 200, Raw: []byte("当前模型负载过高"), Header: map[string]string{"Content-Type": "text/plain"}}))
		resp := post(t, base+"/v1/chat/completions", chatReq, "Authorization: Bearer k")
		if body := readAll(t, resp.Body); string(body) != "当前模型负载过高" || resp.Header.Get("Content-Type") != "text/plain" {
			t.Errorf("body %q type %q", body, resp.Header.Get("Content-Type"))
		}
	})
	t.Run("raw events", func(t *testing.T) {
		events := []string{"event: message_start\ndata: {}", "event: error\ndata: {\"type\":\"error\"}\n\n"}
		_, base := start(t, script(Reply{RawEvents: events}))
		resp := post(t, base+"/v1/messages", anthropicReq, "x-api-key: k", "anthropic-version: 2023-06-01")
		want := "event: message_start\ndata: {}\n\nevent: error\ndata: {\"type\":\"error\"}\n\n"
		if body := readAll(t, resp.Body); string(body) != want || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Errorf("body %q", body)
		}
	})
	t.Run("scripted error status", func(t *testing.T) {
		_, base := start(t, script(Reply{Status: 404, Text: "model gone"}))
		resp := post(t, base+"/v1beta/models/g:streamGenerateContent?alt=sse", geminiReq, "x-goog-api-key: k")
		body := readAll(t, resp.Body)
		if resp.StatusCode != 404 || gjson.GetBytes(body, "error.status").String() != "NOT_FOUND" ||
			gjson.GetBytes(body, "error.message").String() != "model gone" {
			t.Errorf("status %d body %s", resp.StatusCode, body)
		}
	})
}

// TestEventNamesMatchData checks the SSE framing the SDKs do not look at:
// an "event:" line equal to the data's type for Anthropic and Responses,
// none for Chat, CRLF-framed data-only events for Gemini.
func TestEventNamesMatchData(t *testing.T) {
	_, base := start(t, Options{})
	hdrs := []string{"Authorization: Bearer k", "x-goog-api-key: k", "anthropic-version: 2023-06-01", "x-mock-scenario: think,tool"}
	for _, path := range []string{"/v1/messages", "/v1/responses"} {
		body := readAll(t, post(t, base+path, `{"model":"m","max_tokens":9,"messages":[],"stream":true}`, hdrs...).Body)
		for _, b := range sseBlocks(body) {
			name, _, _ := strings.Cut(strings.TrimPrefix(b, "event: "), "\n")
			if typ := gjson.Get(sseData(b), "type").String(); typ != name || !strings.HasPrefix(b, "event: ") {
				t.Errorf("%s: event %q carries type %q", path, name, typ)
			}
		}
	}
	chat := readAll(t, post(t, base+"/v1/chat/completions", `{"model":"m","messages":[],"stream":true}`, hdrs...).Body)
	blocks := sseBlocks(chat)
	if strings.Contains(string(chat), "event:") || blocks[len(blocks)-1] != "data: [DONE]" || strings.Contains(string(chat), `"usage"`) {
		t.Errorf("chat stream framing: %s", chat)
	}
	gem := readAll(t, post(t, base+"/v1beta/models/g:streamGenerateContent?alt=sse", geminiReq, hdrs...).Body)
	if !strings.HasSuffix(string(gem), "}\r\n\r\n") || strings.Contains(string(gem), "event:") || strings.Contains(string(gem), "[DONE]") {
		t.Errorf("gemini stream framing: %q", gem)
	}
}

func TestScenarios(t *testing.T) {
	s, base := start(t, Options{})
	anth := []string{"x-api-key: k", "anthropic-version: 2023-06-01"}

	t.Run("tool calls the first declared tool with schema arguments", func(t *testing.T) {
		tests := []struct{ name, path, body, namePath, argsPath, wantName, wantArgs string }{
			{"anthropic", "/v1/messages",
				`{"model":"m-mock-tool","max_tokens":9,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"number"}},"required":["command"]}},{"name":"Other"}]}`,
				"content.0.name", "content.0.input", "Bash", `{"command":"mock"}`},
			{"chat", "/v1/chat/completions",
				`{"model":"m-mock-tool","messages":[],"tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object","properties":{"n":{"type":"integer"},"kind":{"enum":["a","b"]}},"required":["n","kind"]}}}]}`,
				"choices.0.message.tool_calls.0.function.name", "choices.0.message.tool_calls.0.function.arguments", "lookup", `{"n":1,"kind":"a"}`},
			{"responses code mode", "/v1/responses",
				`{"model":"m-mock-tool","input":[{"type":"additional_tools","role":"developer","tools":[{"type":"custom","name":"exec"}]}]}`,
				"output.0.name", "output.0.input", "exec", `"mock"`},
			{"gemini", "/v1beta/models/g-mock-tool:generateContent",
				`{"contents":[],"tools":[{"googleSearch":{}},{"functionDeclarations":[{"name":"find","parameters":{"type":"OBJECT","properties":{"q":{"type":"STRING"},"ok":{"type":"BOOLEAN"}},"required":["q","ok"]}}]}]}`,
				"candidates.0.content.parts.0.functionCall.name", "candidates.0.content.parts.0.functionCall.args", "find", `{"q":"mock","ok":true}`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				body := readAll(t, post(t, base+tt.path, tt.body, "Authorization: Bearer k", "x-goog-api-key: k", "anthropic-version: 2023-06-01").Body)
				if n := gjson.GetBytes(body, tt.namePath).String(); n != tt.wantName {
					t.Errorf("tool %q, want %q in %s", n, tt.wantName, body)
				}
				args := gjson.GetBytes(body, tt.argsPath)
				if args.Type == gjson.String && tt.name != "responses code mode" {
					jsonEqual(t, args.String(), tt.wantArgs)
				} else {
					jsonEqual(t, args.Raw, tt.wantArgs)
				}
			})
		}
	})
	t.Run("tool answers a tool result with text", func(t *testing.T) {
		c := anthropicClient(base, "k")
		p := anthropicParams("claude-mock-tool")
		p.Messages = append(p.Messages,
			anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("toolu_1", map[string]any{}, "Bash")),
			anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_1", "ok", false)))
		msg, err := c.Messages.New(testCtx(t), p)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Content[0].Text != ToolResultText || msg.StopReason != anthropic.StopReasonEndTurn {
			t.Errorf("reply = %s", msg.RawJSON())
		}
		body := readAll(t, post(t, base+"/v1/chat/completions",
			`{"model":"m","messages":[{"role":"tool","tool_call_id":"c","content":"ok"}]}`, "Authorization: Bearer k", "x-mock-scenario: tool").Body)
		if got := gjson.GetBytes(body, "choices.0.message.content").String(); got != ToolResultText {
			t.Errorf("chat reply %s", body)
		}
	})
	t.Run("think via the SDK", func(t *testing.T) {
		g, err := geminiStream(t, geminiClient(t, base, "k"), "gemini-2.5-flash-mock-think")
		if err != nil {
			t.Fatal(err)
		}
		if g.thought.String() != ThinkText || g.text.String() != DefaultText || len(g.signature) == 0 {
			t.Errorf("thought %q text %q signature %q", g.thought.String(), g.text.String(), g.signature)
		}
	})
	t.Run("failure statuses per family", func(t *testing.T) {
		tests := []struct {
			scenario, path, body string
			status               int
		}{
			{"fail-400", "/v1/messages", anthropicReq, 400},
			{"fail-401", "/v1/responses", `{"model":"m"}`, 401},
			{"fail-500", "/v1beta/models/g:generateContent", geminiReq, 500},
			{"fail-529", "/v1/messages", anthropicReq, 529},
			{"fail-529", "/v1/chat/completions", chatReq, 503},
			{"think, fail-429", "/v1/chat/completions", chatReq, 429},
			{"nonsense", "/v1/chat/completions", chatReq, 400},
		}
		for _, tt := range tests {
			hdrs := append([]string{"Authorization: Bearer k", "x-goog-api-key: k", "x-mock-scenario: " + tt.scenario}, anth...)
			resp := post(t, base+tt.path, tt.body, hdrs...)
			body := readAll(t, resp.Body)
			if resp.StatusCode != tt.status || !gjson.ValidBytes(body) {
				t.Errorf("%s on %s: status %d body %s, want %d", tt.scenario, tt.path, resp.StatusCode, body, tt.status)
			}
		}
	})
	t.Run("soft error is a 200", func(t *testing.T) {
		resp := post(t, base+"/v1/chat/completions", chatReq, "Authorization: Bearer k", "x-mock-scenario: soft-error")
		body := readAll(t, resp.Body)
		if resp.StatusCode != 200 || gjson.GetBytes(body, "error.type").String() != "server_error" {
			t.Errorf("status %d body %s", resp.StatusCode, body)
		}
	})
	if got := s.Requests()[0].Model; got != "m-mock-tool" {
		t.Errorf("first recorded model %q", got)
	}
}

func TestModelLists(t *testing.T) {
	_, base := start(t, Options{})
	ctx := testCtx(t)

	oc, ac := openaiClient(base, "k"), anthropicClient(base, "k")
	page, err := oc.Models.List(ctx)
	if err != nil || len(page.Data) == 0 || page.Data[0].Object != "model" {
		t.Fatalf("openai list: %v %+v", err, page)
	}
	apage, err := ac.Models.List(ctx, anthropic.ModelListParams{})
	if err != nil || len(apage.Data) == 0 || apage.Data[0].Type != "model" {
		t.Fatalf("anthropic list: %v %+v", err, apage)
	}
	gpage, err := geminiClient(t, base, "k").Models.List(ctx, &genai.ListModelsConfig{})
	if err != nil || len(gpage.Items) == 0 || !strings.HasPrefix(gpage.Items[0].Name, "models/gemini-") {
		t.Fatalf("gemini list: %v %+v", err, gpage)
	}
}

func TestMaxRecordedKeepsTheLast(t *testing.T) {
	s, base := start(t, Options{MaxRecorded: 2})
	for _, m := range []string{"a", "b", "c"} {
		post(t, base+"/v1/chat/completions", `{"model":"`+m+`","messages":[]}`, "Authorization: Bearer k")
	}
	got := s.Requests()
	if len(got) != 2 || got[0].Model != "b" || got[1].Model != "c" {
		t.Errorf("recorded %+v, want the last two", got)
	}
}

func TestFamiliesServesOnlyThose(t *testing.T) {
	s, base := start(t, Options{Families: []string{Anthropic}})
	chat := post(t, base+"/v1/chat/completions", chatReq, "Authorization: Bearer k")
	emb := post(t, base+"/v1/embeddings", `{"model":"e","input":"hi"}`, "Authorization: Bearer k")
	ant := post(t, base+"/v1/messages", anthropicReq, "x-api-key: k", "anthropic-version: 2023-06-01")
	for name, r := range map[string]*http.Response{"chat": chat, "embeddings": emb} {
		if b := readAll(t, r.Body); r.StatusCode != http.StatusNotFound || !strings.Contains(string(b), "no endpoint for POST") || strings.Contains(string(b), "model") {
			t.Errorf("%s: %d %s, want the unknown-endpoint 404 that names no model", name, r.StatusCode, b)
		}
	}
	if ant.StatusCode != http.StatusOK {
		t.Errorf("anthropic: %d, want 200", ant.StatusCode)
	}
	got := s.Requests()
	if len(got) != 3 || got[0].Family != "" || got[0].Path != "/v1/chat/completions" || got[2].Family != Anthropic {
		t.Errorf("recorded %+v", got)
	}
}
