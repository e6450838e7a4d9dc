package count

import (
	"errors"
	"strings"
	"testing"
)

func mustGemini(t *testing.T, model, body string) int {
	t.Helper()
	n, err := Gemini(model, []byte(body))
	if err != nil {
		t.Fatalf("Gemini(%s): %v", body, err)
	}
	return n
}

func TestGeminiMoreTextMoreTokens(t *testing.T) {
	prev := 0
	for _, words := range []int{1, 2, 10, 100, 1000} {
		text := strings.Repeat("counting tokens locally ", words)
		n := mustGemini(t, "gemini-2.5-flash", `{"contents":[{"parts":[{"text":"`+text+`"}]}]}`)
		if n <= prev {
			t.Errorf("%d words: %d tokens, not more than %d for fewer words", words, n, prev)
		}
		prev = n
	}
}

func TestGeminiRequestShapes(t *testing.T) {
	contents := `"contents":[{"role":"user","parts":[{"text":"What is the weather in Paris?"}]}]`
	plain := mustGemini(t, "gemini-2.5-flash", `{`+contents+`}`)
	wrapped := mustGemini(t, "gemini-2.5-flash", `{"generateContentRequest":{"model":"models/gemini-2.5-flash",`+contents+`}}`)
	snake := mustGemini(t, "gemini-2.5-flash", `{"generate_content_request":{`+contents+`}}`)
	if plain != wrapped || plain != snake {
		t.Errorf("same contents: plain %d, generateContentRequest %d, snake_case %d", plain, wrapped, snake)
	}

	sys := mustGemini(t, "gemini-2.5-flash", `{"generateContentRequest":{"systemInstruction":{"parts":[{"text":"You are a cat. Your name is Neko."}]},`+contents+`}}`)
	if sys <= plain {
		t.Errorf("system instruction: %d tokens, not more than %d without", sys, plain)
	}
	fn := `{"name":"get_weather","description":"Get the current weather in a given location","parameters":{"type":"OBJECT","properties":{"location":{"type":"STRING"}}}}`
	one := mustGemini(t, "gemini-2.5-flash", `{"generateContentRequest":{"tools":[{"functionDeclarations":[`+fn+`]}],`+contents+`}}`)
	two := mustGemini(t, "gemini-2.5-flash", `{"generateContentRequest":{"tools":[{"functionDeclarations":[`+fn+`,`+strings.Replace(fn, "get_weather", "get_forecast", 1)+`]}],`+contents+`}}`)
	if one-plain < 20 || two <= one {
		t.Errorf("tools: none %d, one %d, two %d; want each declaration counted", plain, one, two)
	}
}

func TestGeminiMedia(t *testing.T) {
	body := func(parts string) string { return `{"contents":[{"parts":[` + parts + `]}]}` }
	img := `{"inlineData":{"mimeType":"image/png","data":"` + pngHeader(800, 600) + `"}}`
	if n := mustGemini(t, "gemini-2.0-flash", body(img)); n != 258 {
		t.Errorf("image on Gemini 2.0: %d tokens, want 258", n)
	}
	if n := mustGemini(t, "gemini-3-pro-preview", body(img)); n != 1120 {
		t.Errorf("image on Gemini 3 (default high): %d tokens, want 1120", n)
	}
	low := `{"generationConfig":{"mediaResolution":"MEDIA_RESOLUTION_LOW"},"contents":[{"parts":[` + img + `]}]}`
	if n := mustGemini(t, "gemini-3-pro-preview", low); n != 280 {
		t.Errorf("image on Gemini 3 at low resolution: %d tokens, want 280", n)
	}
	file := `{"fileData":{"mimeType":"image/jpeg","fileUri":"https://generativelanguage.googleapis.com/v1beta/files/abc"}}`
	if n := mustGemini(t, "gemini-2.0-flash", body(file)); n != 258 {
		t.Errorf("uploaded image: %d tokens, want 258", n)
	}
	call := `{"functionCall":{"name":"get_weather","args":{"location":"Paris"}}},{"functionResponse":{"name":"get_weather","response":{"output":"sunny, 21 C"}}}`
	if n := mustGemini(t, "gemini-2.0-flash", body(call)); n < 10 {
		t.Errorf("function call and response: %d tokens, want their names and JSON counted", n)
	}
}

func TestGeminiInvalid(t *testing.T) {
	for _, body := range []string{
		``, `null`, `[]`, `{`, `{}`, `{"contents":{}}`, `{"contents":[1]}`,
		`{"contents":[{"parts":{}}]}`, `{"contents":[{"parts":[1]}]}`,
		`{"generateContentRequest":[]}`, `{"generateContentRequest":{}}`,
		`{"generateContentRequest":{"contents":[],"tools":{}}}`, `{"generateContentRequest":{"contents":[],"systemInstruction":"hi"}}`,
	} {
		n, err := Gemini("gemini-2.5-flash", []byte(body))
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Gemini(%s) = %d, %v; want ErrInvalid", body, n, err)
		}
	}
}

func FuzzGemini(f *testing.F) {
	for _, c := range geminiRefs {
		f.Add(c.model, []byte(c.body))
	}
	f.Add("gemini-3-pro", []byte(`{"contents":[{"parts":[{"inlineData":{"mimeType":"application/pdf","data":"JVBERi0xLjQKL1R5cGUgL1BhZ2U="}}]}]}`))
	f.Fuzz(func(t *testing.T, model string, body []byte) {
		n, err := Gemini(model, body)
		if err == nil && n < 0 {
			t.Fatalf("negative count %d", n)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("error %v does not wrap ErrInvalid", err)
		}
	})
}
