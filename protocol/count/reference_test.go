package count

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"strings"
	"testing"
)

// refCase is a request whose real count was published by the provider. Each
// case names its source; fit says which constant (doc.go) was fitted on it, so
// a fitted case only checks that the model still reproduces it.
type refCase struct {
	name   string
	source string
	model  string // Gemini only: the model in the path
	body   string
	want   int     // published count
	tol    float64 // accepted relative error
	fit    string
}

// anthropicRefs are the examples of Anthropic's token counting guide
// (docs.claude.com/en/docs/build-with-claude/token-counting; the 2025
// revision names claude-opus-4-20250514, later revisions repeat the same
// outputs under newer model names).
var anthropicRefs = []refCase{
	{
		name:   "system and one message",
		source: "Anthropic token counting guide, 'Count tokens in basic messages'",
		body:   `{"model":"claude-opus-4-20250514","system":"You are a scientist","messages":[{"role":"user","content":"Hello, Claude"}]}`,
		want:   14, tol: 0.10, fit: "claudeBase, claudePerMsg",
	},
	{
		name:   "one tool",
		source: "Anthropic token counting guide, 'Count tokens in messages with tools'",
		body: `{"model":"claude-opus-4-20250514","tools":[{"name":"get_weather","description":"Get the current weather in a given location",` +
			`"input_schema":{"type":"object","properties":{"location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"}},"required":["location"]}}],` +
			`"messages":[{"role":"user","content":"What's the weather like in San Francisco?"}]}`,
		want: 403, tol: 0.02, fit: "claudePerTool",
	},
	{
		name: "large photo and a question",
		source: "Anthropic token counting guide, 'Count tokens in messages with images' (2025 revision: a Wikimedia photo of an ant, " +
			"larger than the 1568 px limit; its size is not given, the test uses a 4000x3000 PNG header)",
		body: `{"model":"claude-opus-4-20250514","messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` +
			pngHeader(4000, 3000) + `"}},{"type":"text","text":"Describe this image"}]}]}`,
		want: 1551, tol: 0.05,
	},
	{
		name:   "thinking, earlier turn's thinking ignored",
		source: "Anthropic token counting guide, 'Count tokens in messages with extended thinking'",
		body: `{"model":"claude-opus-4-20250514","thinking":{"type":"enabled","budget_tokens":16000},"messages":[` +
			`{"role":"user","content":"Are there an infinite number of prime numbers such that n mod 4 == 3?"},` +
			`{"role":"assistant","content":[{"type":"thinking","thinking":"This is a nice number theory question. Let's think about it step by step...","signature":"EuYBCkQYAiJAgCs1le6/Pol5Z4/JMomVOouGrWdhYNsH3ukzUECbB6iWrSQtsQuRHJID6lWV..."},` +
			`{"type":"text","text":"Yes, there are infinitely many prime numbers p such that p mod 4 = 3..."}]},` +
			`{"role":"user","content":"Can you write a formal proof?"}]}`,
		want: 88, tol: 0.10, fit: "claudeThinking",
	},
}

// geminiRefs are Google's published countTokens outputs.
var geminiRefs = []refCase{
	{
		name:   "one sentence",
		source: "ai.google.dev/api/tokens and google-gemini/api-examples python/count_tokens.py, tokens_text_only",
		model:  "gemini-2.0-flash",
		body:   `{"contents":[{"role":"user","parts":[{"text":"The quick brown fox jumps over the lazy dog."}]}]}`,
		want:   10, tol: 0.10,
	},
	{
		name:   "chat history",
		source: "google-gemini/cookbook quickstarts/Counting_Tokens.ipynb, 'Multi-turn tokens' (gemini-1.5-flash); api-examples tokens_chat",
		model:  "gemini-1.5-flash",
		body:   `{"contents":[{"role":"user","parts":[{"text":"Hi my name is Bob"}]},{"role":"model","parts":[{"text":"Hi Bob!"}]}]}`,
		want:   10, tol: 0.15, fit: "geminiPerContent",
	},
	{
		name:   "chat history and a new question",
		source: "google-gemini/cookbook quickstarts/Counting_Tokens.ipynb, 'Multi-turn tokens' (gemini-1.5-flash)",
		model:  "gemini-1.5-flash",
		body: `{"contents":[{"role":"user","parts":[{"text":"Hi my name is Bob"}]},{"role":"model","parts":[{"text":"Hi Bob!"}]},` +
			`{"role":"user","parts":[{"text":"What is the meaning of life?"}]}]}`,
		want: 17, tol: 0.10, fit: "geminiPerContent",
	},
	{
		name:   "chat about cats",
		source: "geminibyexample.com/026-token-counting (gemini-2.0-flash), 'Tokens in initial chat history'",
		model:  "gemini-2.0-flash",
		body: `{"contents":[{"role":"user","parts":[{"text":"Hey there! I love cats!"}]},` +
			`{"role":"model","parts":[{"text":"Me too! Cats are the best. What's your favorite breed?"}]}]}`,
		want: 24, tol: 0.15, fit: "geminiPerContent",
	},
	{
		name:   "prompt and an image",
		source: "Gemini API token guide (ai.google.dev/gemini-api/docs/tokens), 'Image files': prompt plus organ.jpg (gemini-2.0-flash)",
		model:  "gemini-2.0-flash",
		body: `{"generateContentRequest":{"model":"models/gemini-2.0-flash","contents":[{"role":"user","parts":[{"text":"Tell me about this image"},` +
			`{"inlineData":{"mimeType":"image/jpeg","data":"/9j/4AAQSkZJRgABAQAAAQABAAD"}}]}]}}`,
		want: 263, tol: 0.02,
	},
	{
		name:   "short prompt",
		source: "google-gemini/api-examples python/count_tokens.py, tokens_cached_content ('Please give a short summary of this file.')",
		model:  "gemini-1.5-flash",
		body:   `{"contents":[{"parts":[{"text":"Please give a short summary of this file."}]}]}`,
		want:   9, tol: 0.12,
	},
}

// TestReferenceCounts checks every published case and prints the error table
// that doc.go reports (go test -run TestReferenceCounts -v).
func TestReferenceCounts(t *testing.T) {
	run := func(family string, cases []refCase, count func(refCase) (int, error)) {
		for _, c := range cases {
			got, err := count(c)
			if err != nil {
				t.Errorf("%s %q: %v", family, c.name, err)
				continue
			}
			rel := float64(got-c.want) / float64(c.want)
			t.Logf("%-9s %-42s want %5d got %5d  %+6.1f%%", family, c.name, c.want, got, 100*rel)
			if math.Abs(rel) > c.tol {
				t.Errorf("%s %q: got %d, published %d (%+.1f%%, tolerance %.0f%%; source: %s)",
					family, c.name, got, c.want, 100*rel, 100*c.tol, c.source)
			}
		}
	}
	run("anthropic", anthropicRefs, func(c refCase) (int, error) { return Anthropic([]byte(c.body)) })
	run("gemini", geminiRefs, func(c refCase) (int, error) { return Gemini(c.model, []byte(c.body)) })
}

// pngHeader is the base64 of a PNG signature and IHDR chunk declaring a w x h
// truecolor image: all that image.DecodeConfig reads.
func pngHeader(w, h int) string {
	var ihdr bytes.Buffer
	ihdr.WriteString("IHDR")
	binary.Write(&ihdr, binary.BigEndian, uint32(w))
	binary.Write(&ihdr, binary.BigEndian, uint32(h))
	ihdr.Write([]byte{8, 2, 0, 0, 0})
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	binary.Write(&b, binary.BigEndian, uint32(ihdr.Len()-4))
	b.Write(ihdr.Bytes())
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(ihdr.Bytes()))
	b.WriteString(strings.Repeat("\x00", 12)) // room for a reader that looks ahead
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func TestPNGHeaderDecodes(t *testing.T) {
	w, h, ok := imageSize(pngHeader(1092, 1092))
	if !ok || w != 1092 || h != 1092 {
		t.Fatalf("imageSize = %d x %d, %v", w, h, ok)
	}
	if got := fmt.Sprint(claudeImageTokens(w, h)); got != "1590" { // vision guide: 1092x1092 ~ 1590
		t.Fatalf("1092x1092 = %s tokens, the vision guide says ~1590", got)
	}
}
