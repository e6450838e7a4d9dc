package engine_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/store"
)

// passConfig: every client model is renamed upstream. Channel "flaky"
// (priority 10) fails what the script says; "openai" (priority 5) serves
// the same models; "claude" speaks only Anthropic and serves claude-only.
const passConfig = `version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: "{{DB}}"}
routing: {unpriced: allow}
channels:
  - name: flaky
    priority: 10
    urls: [{url: "{{MOCK}}/v1", protocols: [openai]}]
    keys: [key-flaky-0001]
    models: [{name: emb, upstream: emb-flaky}]
  - name: openai
    priority: 5
    urls: ["{{MOCK}}"]
    keys: [key-openai-0001]
    models:
      - {name: emb, upstream: text-embedding-3-small}
      - {name: instruct, upstream: gpt-3.5-turbo-instruct}
      - {name: img, upstream: gpt-image-1}
      - {name: stt, upstream: gpt-4o-transcribe}
      - {name: tts, upstream: gpt-4o-mini-tts}
      - {name: mod, upstream: omni-moderation-latest}
  - name: claude
    urls: [{url: "{{MOCK}}", protocols: [anthropic]}]
    keys: [key-claude-0001]
    models: [claude-only]
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
`

func startPass(t *testing.T, script func(r *mockupstream.Recorded) mockupstream.Reply) (*gateway, *mockupstream.Server, openai.Client) {
	t.Helper()
	m, u := startMock(t, mockupstream.Options{Script: script})
	g := startGateway(t, strings.ReplaceAll(passConfig, "{{MOCK}}", u))
	c := openai.NewClient(ooption.WithBaseURL(g.URL+"/v1"), ooption.WithAPIKey(testToken), ooption.WithMaxRetries(0))
	return g, m, c
}

// lastUpstream is the last request the mock saw, checked for the channel
// key (never the client token) and the renamed model.
func lastUpstream(t *testing.T, m *mockupstream.Server, path, key, model string) mockupstream.Recorded {
	t.Helper()
	reqs := m.Requests()
	if len(reqs) == 0 {
		t.Fatal("upstream saw no request")
	}
	r := reqs[len(reqs)-1]
	if r.Path != path || r.Key != key || r.Model != model {
		t.Errorf("upstream got %s key=%q model=%q, want %s key=%q model=%q", r.Path, r.Key, r.Model, path, key, model)
	}
	if bytes.Contains(r.Body, []byte(testToken)) || strings.Contains(r.Header.Get("Authorization"), testToken) {
		t.Error("the client token reached the upstream")
	}
	return r
}

// rowFor is the newest log row for a client model.
func rowFor(t *testing.T, g *gateway, n int, model string) store.LogRow {
	t.Helper()
	for _, row := range g.waitLogs(t, n) {
		if row.Model == model {
			return row
		}
	}
	t.Fatalf("no log row for model %q", model)
	return store.LogRow{}
}

func TestPassthroughEmbeddingsFailOver(t *testing.T) {
	g, m, c := startPass(t, func(r *mockupstream.Recorded) mockupstream.Reply {
		if r.Model == "emb-flaky" {
			return mockupstream.Reply{Status: 503}
		}
		return mockupstream.Reply{}
	})
	res, err := c.Embeddings.New(context.Background(), openai.EmbeddingNewParams{
		Model: "emb",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a", "b"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 2 || len(res.Data[1].Embedding) != 4 || res.Usage.PromptTokens != 21 {
		t.Errorf("embeddings answer: %d vectors, usage %+v", len(res.Data), res.Usage)
	}
	reqs := m.Requests()
	if len(reqs) != 2 || reqs[0].Path != "/v1/embeddings" || reqs[0].Key != "key-flaky-0001" {
		t.Fatalf("want the flaky channel tried first, then openai; upstream saw %d requests", len(reqs))
	}
	lastUpstream(t, m, "/v1/embeddings", "key-openai-0001", "text-embedding-3-small")
	row := rowFor(t, g, 1, "emb")
	if row.Status != 200 || row.Channel != "openai" || row.Attempts != 2 || row.InputTokens != 21 || row.UpstreamModel != "text-embedding-3-small" {
		t.Errorf("log row: status %d channel %s attempts %d input %d upstream model %s", row.Status, row.Channel, row.Attempts, row.InputTokens, row.UpstreamModel)
	}
	// text-embedding-3-small: 21 tokens at $0.02 per million.
	if row.Unpriced || row.Cost < 4.19e-7 || row.Cost > 4.21e-7 {
		t.Errorf("embeddings cost %g (unpriced %v), want 4.2e-7", row.Cost, row.Unpriced)
	}
	cooling := false
	for _, st := range g.Engine.ChannelStates() {
		if st.Name == "flaky" && len(st.Cooldowns) > 0 {
			cooling = true
		}
	}
	if !cooling {
		t.Error("the failing channel must cool as for chat")
	}
}

func TestPassthroughCompletions(t *testing.T) {
	g, m, c := startPass(t, nil)
	ctx := context.Background()
	params := openai.CompletionNewParams{
		Model:  "instruct",
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Say hello")},
	}
	res, err := c.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Choices) != 1 || res.Choices[0].Text != mockText || res.Usage.CompletionTokens != 13 {
		t.Errorf("completion: %+v", res)
	}
	lastUpstream(t, m, "/v1/completions", "key-openai-0001", "gpt-3.5-turbo-instruct")

	st := c.Completions.NewStreaming(ctx, params)
	var text strings.Builder
	for st.Next() {
		if ch := st.Current().Choices; len(ch) > 0 {
			text.WriteString(ch[0].Text)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != mockText {
		t.Errorf("streamed text %q, want %q", text.String(), mockText)
	}
	rows := g.waitLogs(t, 2)
	for _, row := range rows {
		if row.Status != 200 || row.InputTokens != 21 || row.OutputTokens != 13 {
			t.Errorf("log row (stream=%v): status %d usage %d/%d", row.Stream, row.Status, row.InputTokens, row.OutputTokens)
		}
	}
}

func TestPassthroughImages(t *testing.T) {
	g, m, c := startPass(t, nil)
	ctx := context.Background()
	res, err := c.Images.Generate(ctx, openai.ImageGenerateParams{Model: "img", Prompt: "a cat"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 1 || res.Usage.OutputTokens != 13 {
		t.Errorf("images answer: %+v", res)
	}
	lastUpstream(t, m, "/v1/images/generations", "key-openai-0001", "gpt-image-1")

	png := bytes.Repeat([]byte("\x89PNG\r\n--fake\r\n"), 100)
	_, err = c.Images.Edit(ctx, openai.ImageEditParams{
		Model:  "img",
		Prompt: "add a hat",
		Image:  openai.ImageEditParamsImageUnion{OfFile: openai.File(bytes.NewReader(png), "cat.png", "image/png")},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := lastUpstream(t, m, "/v1/images/edits", "key-openai-0001", "gpt-image-1")
	if !bytes.Contains(r.Body, png) || !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data; boundary=") {
		t.Error("the image file did not reach the upstream intact in the form")
	}
	//lint:ignore SA1019 the variations endpoint is deprecated upstream but still served, so its passthrough is tested
	_, err = c.Images.NewVariation(ctx, openai.ImageNewVariationParams{
		Model: "img",
		Image: openai.File(bytes.NewReader(png), "cat.png", "image/png"),
	})
	if err != nil {
		t.Fatal(err)
	}
	lastUpstream(t, m, "/v1/images/variations", "key-openai-0001", "gpt-image-1")
	if row := rowFor(t, g, 3, "img"); row.InputTokens != 21 || row.OutputTokens != 13 {
		t.Errorf("image row usage %d/%d", row.InputTokens, row.OutputTokens)
	}
}

func TestPassthroughAudio(t *testing.T) {
	g, m, c := startPass(t, nil)
	ctx := context.Background()
	wav := bytes.Repeat([]byte("RIFF\r\n\r\nname=\"model\"\r\n"), 200) // looks like a form part on purpose
	tr, err := c.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
		Model: "stt", File: openai.File(bytes.NewReader(wav), "a.wav", "audio/wav"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Text != mockText {
		t.Errorf("transcript %q", tr.Text)
	}
	r := lastUpstream(t, m, "/v1/audio/transcriptions", "key-openai-0001", "gpt-4o-transcribe")
	if !bytes.Contains(r.Body, wav) {
		t.Error("the audio file was changed on the way")
	}
	//lint:ignore SA1019 the translations endpoint is deprecated upstream but still served, so its passthrough is tested
	tl, err := c.Audio.Translations.New(ctx, openai.AudioTranslationNewParams{
		Model: "stt", File: openai.File(bytes.NewReader(wav), "a.wav", "audio/wav"),
	})
	if err != nil || tl.Text != mockText {
		t.Fatalf("translation %v %v", tl, err)
	}
	lastUpstream(t, m, "/v1/audio/translations", "key-openai-0001", "gpt-4o-transcribe")
	if row := rowFor(t, g, 2, "stt"); row.Status != 200 || row.InputTokens != 21 {
		t.Errorf("transcription row: status %d input %d", row.Status, row.InputTokens)
	}
}

// rawPost is what curl sends: a JSON body with the token as a Bearer.
func rawPost(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestPassthroughSpeechAndModerations(t *testing.T) {
	g, m, _ := startPass(t, nil)
	resp, b := rawPost(t, g.URL+"/v1/audio/speech", `{"model":"tts","input":"Hello","voice":"alloy"}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/mpeg" || !bytes.Equal(b, mockupstream.SpeechBytes) {
		t.Errorf("speech: %d %s, %d bytes (want the %d upstream bytes)", resp.StatusCode, resp.Header.Get("Content-Type"), len(b), len(mockupstream.SpeechBytes))
	}
	lastUpstream(t, m, "/v1/audio/speech", "key-openai-0001", "gpt-4o-mini-tts")

	resp, b = rawPost(t, g.URL+"/v1/moderations", `{"model":"mod","input":"hello"}`)
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"flagged":false`)) {
		t.Errorf("moderations: %d %s", resp.StatusCode, b)
	}
	lastUpstream(t, m, "/v1/moderations", "key-openai-0001", "omni-moderation-latest")
	if row := rowFor(t, g, 2, "tts"); row.Status != 200 || row.Channel != "openai" {
		t.Errorf("speech row: status %d channel %s", row.Status, row.Channel)
	}
}

func TestPassthroughRefusesOtherFamilies(t *testing.T) {
	g, m, _ := startPass(t, nil)
	resp, b := rawPost(t, g.URL+"/v1/embeddings", `{"model":"claude-only","input":"x"}`)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "/v1/embeddings") || !strings.Contains(string(b), "claude-only") {
		t.Errorf("want a 400 naming the endpoint and model, got %d %s", resp.StatusCode, b)
	}
	if n := len(m.Requests()); n != 0 {
		t.Errorf("upstream saw %d requests, want none", n)
	}
	req, _ := http.NewRequest("POST", g.URL+"/v1/audio/transcriptions", strings.NewReader("not a form"))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "multipart/form-data; boundary=zzz")
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != 400 {
		t.Errorf("a malformed form: %d, want 400", r2.StatusCode)
	}
}
