package protocol

import "testing"

func TestUpstreamURL(t *testing.T) {
	cases := []struct {
		f      Family
		base   string
		exact  bool
		model  string
		stream bool
		want   string
	}{
		{Anthropic, "https://api.anthropic.com", false, "m", true, "https://api.anthropic.com/v1/messages"},
		{Anthropic, "https://relay.example.com/api/", false, "m", false, "https://relay.example.com/api/v1/messages"},
		{OpenAI, "https://api.openai.com/v1", false, "m", true, "https://api.openai.com/v1/chat/completions"},
		{Responses, "http://127.0.0.1:9901/v1/", false, "m", true, "http://127.0.0.1:9901/v1/responses"},
		{Gemini, "https://generativelanguage.googleapis.com/v1beta", false, "gemini-3.5-flash-lite", true,
			"https://generativelanguage.googleapis.com/v1beta/models/gemini-3.5-flash-lite:streamGenerateContent?alt=sse"},
		{Gemini, "https://g.example", false, "gemini-x", false, "https://g.example/v1beta/models/gemini-x:generateContent"},
		{Anthropic, "https://relay.example.com/v1/messages", true, "m", true, "https://relay.example.com/v1/messages"},
		{Gemini, "https://g.example/custom?x=1", true, "m", true, "https://g.example/custom?x=1&alt=sse"},
	}
	for _, c := range cases {
		if got := UpstreamURL(c.f, c.base, c.exact, c.model, c.stream); got != c.want {
			t.Errorf("UpstreamURL(%s, %q, exact=%v) = %q, want %q", c.f, c.base, c.exact, got, c.want)
		}
	}
}

func TestErrorBodyIsValidJSONInEveryShape(t *testing.T) {
	for _, f := range Families {
		for _, st := range []int{400, 401, 404, 413, 429, 500, 503} {
			b := ErrorBody(f, st, "bad \"thing\"\n\x01")
			if !jsonValid(b) {
				t.Errorf("%s %d: invalid JSON %s", f, st, b)
			}
		}
	}
}
