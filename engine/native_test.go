package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// nativeConfig has one channel per family, each renaming its model, all
// pointing at one mock upstream.
const nativeConfig = `version: 1
server: {admin_password: test, max_body_bytes: 1MiB}
storage: {driver: sqlite, dsn: "{{DB}}"}
channels:
  - name: anthropic
    urls: [{url: "{{MOCK}}", protocols: [anthropic]}]
    keys: [key-anthropic-0001]
    models: [{name: claude-client, upstream: claude-upstream}]
  - name: openai
    urls: [{url: "{{MOCK}}/v1", protocols: [openai]}]
    keys: [key-openai-0001]
    models: [{name: gpt-client, upstream: gpt-upstream}]
  - name: responses
    urls: [{url: "{{MOCK}}", protocols: [responses]}]
    keys: [key-responses-0001]
    models: [{name: codex-client, upstream: codex-upstream}]
  - name: gemini
    urls: [{url: "{{MOCK}}", protocols: [gemini]}]
    keys: [key-gemini-0001]
    models: [{name: gemini-client, upstream: gemini-upstream}]
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
`

const mockText = "Hello from the ccload mock upstream."

func startNative(t *testing.T) (*gateway, *mockupstream.Server) {
	t.Helper()
	m, mockURL := startMock(t, mockupstream.Options{})
	return startGateway(t, strings.ReplaceAll(nativeConfig, "{{MOCK}}", mockURL)), m
}

// checkUpstreamSaw asserts the upstream got the channel key and the renamed
// model, and never the client token.
func checkUpstreamSaw(t *testing.T, m *mockupstream.Server, key, model string) {
	t.Helper()
	reqs := m.Requests()
	if len(reqs) == 0 {
		t.Fatal("upstream saw no request")
	}
	r := reqs[len(reqs)-1]
	if r.Key != key {
		t.Errorf("upstream credential = %q, want the channel key %q", r.Key, key)
	}
	if r.Model != model {
		t.Errorf("upstream model = %q, want %q", r.Model, model)
	}
	for name, vals := range r.Header {
		for _, v := range vals {
			if strings.Contains(v, testToken) {
				t.Errorf("client token leaked upstream in header %s", name)
			}
		}
	}
	if strings.Contains(string(r.Body)+r.RawQuery, testToken) {
		t.Error("client token leaked upstream in body or query")
	}
}

func TestNativeAnthropic(t *testing.T) {
	g, m := startNative(t)
	c := anthropic.NewClient(aoption.WithBaseURL(g.URL), aoption.WithAPIKey(testToken), aoption.WithMaxRetries(0))
	params := anthropic.MessageNewParams{
		Model:     "claude-client",
		MaxTokens: 64,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hello"))},
	}
	ctx := context.Background()

	msg, err := c.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := msg.Content[0].Text; got != mockText {
		t.Errorf("non-stream text = %q", got)
	}
	checkUpstreamSaw(t, m, "key-anthropic-0001", "claude-upstream")

	stream := c.Messages.NewStreaming(ctx, params)
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Content) == 0 || acc.Content[0].Text != mockText {
		t.Errorf("stream text = %+v", acc.Content)
	}
	if acc.StopReason != anthropic.StopReasonEndTurn || acc.Usage.OutputTokens == 0 {
		t.Errorf("stream stop=%q usage=%+v", acc.StopReason, acc.Usage)
	}
	checkUpstreamSaw(t, m, "key-anthropic-0001", "claude-upstream")

	rows := g.waitLogs(t, 2)
	for _, r := range rows {
		if r.Status != 200 || r.Channel != "anthropic" || r.Token != "tester" || r.UpstreamModel != "claude-upstream" || r.OutputTokens == 0 {
			t.Errorf("log row = %+v", r)
		}
		if strings.Contains(r.KeyFP, "key-anthropic-0001") {
			t.Errorf("log row holds the key in full: %q", r.KeyFP)
		}
	}
}

func TestNativeOpenAIChat(t *testing.T) {
	g, m := startNative(t)
	c := openai.NewClient(ooption.WithBaseURL(g.URL+"/v1"), ooption.WithAPIKey(testToken), ooption.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-client",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello")},
	}
	ctx := context.Background()
	resp, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != mockText {
		t.Errorf("non-stream text = %q", got)
	}
	checkUpstreamSaw(t, m, "key-openai-0001", "gpt-upstream")

	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := c.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) == 0 || acc.Choices[0].Message.Content != mockText {
		t.Errorf("stream = %+v", acc.Choices)
	}
	if acc.Choices[0].FinishReason != "stop" || acc.Usage.CompletionTokens == 0 {
		t.Errorf("finish=%q usage=%+v", acc.Choices[0].FinishReason, acc.Usage)
	}
	checkUpstreamSaw(t, m, "key-openai-0001", "gpt-upstream")
	g.waitLogs(t, 2)
}

func TestNativeResponses(t *testing.T) {
	g, m := startNative(t)
	c := openai.NewClient(ooption.WithBaseURL(g.URL+"/v1"), ooption.WithAPIKey(testToken), ooption.WithMaxRetries(0))
	params := responses.ResponseNewParams{
		Model: "codex-client",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hello")},
	}
	ctx := context.Background()
	resp, err := c.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.OutputText(); got != mockText {
		t.Errorf("non-stream text = %q", got)
	}
	checkUpstreamSaw(t, m, "key-responses-0001", "codex-upstream")

	stream := c.Responses.NewStreaming(ctx, params)
	var text strings.Builder
	var completed *responses.Response
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.completed":
			r := ev.Response
			completed = &r
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != mockText || completed == nil || completed.OutputText() != mockText {
		t.Errorf("stream text = %q, completed = %v", text.String(), completed != nil)
	}
	if completed != nil && completed.Usage.OutputTokens == 0 {
		t.Errorf("usage = %+v", completed.Usage)
	}
	checkUpstreamSaw(t, m, "key-responses-0001", "codex-upstream")
	g.waitLogs(t, 2)
}

func TestNativeGemini(t *testing.T) {
	g, m := startNative(t)
	ctx := context.Background()
	c, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      testToken,
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: g.URL},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Models.GenerateContent(ctx, "gemini-client", genai.Text("Hello"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Text(); got != mockText {
		t.Errorf("non-stream text = %q", got)
	}
	checkUpstreamSaw(t, m, "key-gemini-0001", "gemini-upstream")

	var text strings.Builder
	var last *genai.GenerateContentResponse
	for chunk, err := range c.Models.GenerateContentStream(ctx, "gemini-client", genai.Text("Hello"), nil) {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(chunk.Text())
		last = chunk
	}
	if text.String() != mockText {
		t.Errorf("stream text = %q", text.String())
	}
	if last == nil || last.UsageMetadata == nil || last.UsageMetadata.CandidatesTokenCount == 0 {
		t.Errorf("last chunk has no usage: %+v", last)
	}
	checkUpstreamSaw(t, m, "key-gemini-0001", "gemini-upstream")
	g.waitLogs(t, 2)
}

// TestChatStreamUsageWithoutIncludeUsage: a Chat client that did not ask for
// the usage chunk does not get one, yet the request is logged with tokens
// (ccload asked the upstream for usage itself).
func TestChatStreamUsageWithoutIncludeUsage(t *testing.T) {
	g, m := startNative(t)
	resp, body := post(t, g.URL+"/v1/chat/completions", `{"model":"gpt-client","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"Authorization": "Bearer " + testToken})
	if resp.StatusCode != 200 || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if strings.Contains(body, `"choices":[]`) {
		t.Fatalf("client got a usage chunk it did not ask for:\n%s", body)
	}
	reqs := m.Requests()
	if !strings.Contains(string(reqs[len(reqs)-1].Body), `"include_usage":true`) {
		t.Fatalf("upstream was not asked for usage: %s", reqs[len(reqs)-1].Body)
	}
	rows := g.waitLogs(t, 1)
	if rows[0].OutputTokens == 0 || rows[0].InputTokens == 0 {
		t.Fatalf("row without tokens: %+v", rows[0])
	}
}
