package mockupstream

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"google.golang.org/genai"
)

func geminiClient(t *testing.T, base, key string) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(testCtx(t), &genai.ClientConfig{
		APIKey: key, Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: base},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// geminiRebuilt is what a client rebuilds from a Gemini stream.
type geminiRebuilt struct {
	text, thought strings.Builder
	signature     []byte
	calls         []*genai.FunctionCall
	finish        genai.FinishReason
	usage         *genai.GenerateContentResponseUsageMetadata
	ids           map[string]bool
	chunks        int
}

func geminiStream(t *testing.T, c *genai.Client, model string) (*geminiRebuilt, error) {
	t.Helper()
	g := &geminiRebuilt{ids: map[string]bool{}}
	for resp, err := range c.Models.GenerateContentStream(testCtx(t), model, genai.Text("hi"), nil) {
		if err != nil {
			return g, err
		}
		g.chunks++
		g.ids[resp.ResponseID] = true
		cand := resp.Candidates[0]
		for _, p := range cand.Content.Parts {
			switch {
			case p.Thought:
				g.thought.WriteString(p.Text)
			case p.FunctionCall != nil:
				g.calls = append(g.calls, p.FunctionCall)
			default:
				g.text.WriteString(p.Text)
			}
			if len(p.ThoughtSignature) > 0 {
				g.signature = p.ThoughtSignature
			}
		}
		if cand.FinishReason != "" {
			g.finish = cand.FinishReason
		}
		g.usage = resp.UsageMetadata
	}
	return g, nil
}

func checkGeminiUsage(t *testing.T, u *genai.GenerateContentResponseUsageMetadata, want Usage) {
	t.Helper()
	prompt := int32(want.Input + want.CacheRead + want.CacheWrite)
	if u == nil || u.PromptTokenCount != prompt || u.CandidatesTokenCount != int32(want.Output-want.Reasoning) ||
		u.ThoughtsTokenCount != int32(want.Reasoning) || u.CachedContentTokenCount != int32(want.CacheRead) ||
		u.TotalTokenCount != prompt+int32(want.Output) {
		t.Errorf("usage = %+v, want %+v", u, want)
	}
}

func TestGeminiSDKText(t *testing.T) {
	s, base := start(t, Options{})
	c := geminiClient(t, base, "AIza-test")

	resp, err := c.Models.GenerateContent(testCtx(t), "gemini-2.5-flash", genai.Text("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != DefaultText || resp.Candidates[0].FinishReason != genai.FinishReasonStop ||
		resp.ModelVersion != "gemini-2.5-flash" || resp.ResponseID == "" {
		t.Fatalf("response = %+v", resp)
	}
	checkGeminiUsage(t, resp.UsageMetadata, DefaultUsage())

	g, err := geminiStream(t, c, "gemini-2.5-flash")
	if err != nil {
		t.Fatal(err)
	}
	if g.text.String() != DefaultText || g.finish != genai.FinishReasonStop || g.chunks < 3 || len(g.ids) != 1 {
		t.Errorf("stream: text %q finish %q chunks %d ids %v", g.text.String(), g.finish, g.chunks, g.ids)
	}
	checkGeminiUsage(t, g.usage, DefaultUsage())

	reqs := s.Requests()
	if len(reqs) != 2 || reqs[1].Model != "gemini-2.5-flash" || !reqs[1].Stream || reqs[1].Key != "AIza-test" || reqs[1].RawQuery != "alt=sse" {
		t.Errorf("recorded = %+v", reqs)
	}
}

func TestGeminiSDKToolCallsAndThinking(t *testing.T) {
	rep := Reply{
		Thinking: "Look it up.", ThinkingSignature: "not base64!",
		ToolCalls: []ToolCall{{Name: "lookup", Arguments: `{"q":"go","n":2}`}, {ID: "fc-1", Name: "lookup", Arguments: `{"q":"rust"}`}},
		Usage:     Usage{Input: 10, Output: 8, Reasoning: 3},
	}
	_, base := start(t, script(rep))
	c := geminiClient(t, base, "k")
	wantSig := base64.StdEncoding.EncodeToString([]byte(rep.ThinkingSignature))

	checkCalls := func(t *testing.T, calls []*genai.FunctionCall) {
		if len(calls) != 2 || calls[0].Name != "lookup" || calls[0].ID != "" || calls[1].ID != "fc-1" {
			t.Fatalf("calls = %+v", calls)
		}
		for i, fc := range calls {
			b, err := json.Marshal(fc.Args)
			if err != nil {
				t.Fatal(err)
			}
			jsonEqual(t, string(b), rep.ToolCalls[i].Arguments)
		}
	}
	t.Run("non-stream", func(t *testing.T) {
		resp, err := c.Models.GenerateContent(testCtx(t), "gemini-2.5-pro", genai.Text("hi"), nil)
		if err != nil {
			t.Fatal(err)
		}
		parts := resp.Candidates[0].Content.Parts
		if !parts[0].Thought || parts[0].Text != rep.Thinking {
			t.Errorf("thought part = %+v", parts[0])
		}
		// Gemini 3 signs the first function call of a step.
		if parts[1].FunctionCall == nil || base64.StdEncoding.EncodeToString(parts[1].ThoughtSignature) != wantSig {
			t.Errorf("first call part = %+v", parts[1])
		}
		checkCalls(t, resp.FunctionCalls())
		checkGeminiUsage(t, resp.UsageMetadata, rep.Usage)
	})
	t.Run("stream", func(t *testing.T) {
		g, err := geminiStream(t, c, "gemini-2.5-pro")
		if err != nil {
			t.Fatal(err)
		}
		if g.thought.String() != rep.Thinking || string(g.signature) != rep.ThinkingSignature || g.text.Len() != 0 {
			t.Errorf("thought %q signature %q text %q", g.thought.String(), g.signature, g.text.String())
		}
		checkCalls(t, g.calls)
		checkGeminiUsage(t, g.usage, rep.Usage)
	})
}

func TestGeminiSDKErrors(t *testing.T) {
	_, base := start(t, Options{Keys: []string{"good"}})
	var apiErr genai.APIError

	_, err := geminiClient(t, base, "bad").Models.GenerateContent(testCtx(t), "gemini-2.5-flash", genai.Text("hi"), nil)
	if !errors.As(err, &apiErr) || apiErr.Code != 401 || apiErr.Status != "UNAUTHENTICATED" {
		t.Fatalf("err = %v, want 401 UNAUTHENTICATED", err)
	}
	_, err = geminiStream(t, geminiClient(t, base, "good"), "gemini-2.5-flash-mock-fail-529")
	if !errors.As(err, &apiErr) || apiErr.Code != 503 || apiErr.Status != "UNAVAILABLE" {
		t.Fatalf("err = %v, want 503 UNAVAILABLE", err)
	}
	_, err = geminiStream(t, geminiClient(t, base, "good"), "gemini-2.5-flash-mock-soft-error")
	if !errors.As(err, &apiErr) || apiErr.Status != "UNAVAILABLE" {
		t.Fatalf("err = %v, want the in-stream error", err)
	}
}
