package engine

import (
	"slices"
	"testing"

	"github.com/ccload/ccload/protocol"
)

// TestPathMiss is the table of detect.go's pathMiss rule, one row per case.
func TestPathMiss(t *testing.T) {
	const geminiPath = "/v1beta/models/gpt-x:generateContent"
	cases := []struct {
		name   string
		status int
		body   string
		path   string
		miss   bool
	}{
		{"405_is_a_miss", 405, `{"error":{"message":"model whatever"}}`, "", true},
		{"404_empty", 404, ``, "", true},
		{"404_html", 404, `<html><body>Not Found: model</body></html>`, "", true},
		{"404_go_plain_text", 404, "404 page not found\n", "", true},
		{"404_fastapi_detail", 404, `{"detail":"Not Found"}`, "", true},
		{"404_openai_invalid_url", 404, `{"error":{"message":"Invalid URL (POST /v1/messages)","type":"invalid_request_error","code":null}}`, "/v1/messages", true},
		{"404_anthropic_generic", 404, `{"type":"error","error":{"type":"not_found_error","message":"Not Found"}}`, "", true},
		{"404_echoes_gemini_path", 404, `{"error":{"message":"no endpoint for POST ` + geminiPath + `"}}`, geminiPath, true},
		{"404_openai_model_not_found", 404, `{"error":{"message":"The model ` + "`gpt-x`" + ` does not exist","code":"model_not_found"}}`, "/v1/chat/completions", false},
		{"404_anthropic_model", 404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}`, "/v1/messages", false},
		{"404_gemini_model", 404, `{"error":{"code":404,"message":"models/gpt-x is not found for API version v1beta","status":"NOT_FOUND"}}`, geminiPath, false},
		{"404_names_the_model_only", 404, `{"error":"gpt-x is not served here"}`, "", false},
		{"401_is_not_a_miss", 401, `Unauthorized`, "", false},
		{"500_is_not_a_miss", 500, `<html>oops</html>`, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := pathMiss(c.status, []byte(c.body), "gpt-x", c.path); got != c.miss {
				t.Errorf("pathMiss = %v, want %v", got, c.miss)
			}
		})
	}
}

func TestDetectFamiliesClientFirstThenFixedOrder(t *testing.T) {
	want := map[protocol.Family][]protocol.Family{
		protocol.OpenAI:    {protocol.OpenAI, protocol.Anthropic, protocol.Responses, protocol.Gemini},
		protocol.Anthropic: {protocol.Anthropic, protocol.OpenAI, protocol.Responses, protocol.Gemini},
		protocol.Responses: {protocol.Responses, protocol.OpenAI, protocol.Anthropic, protocol.Gemini},
		protocol.Gemini:    {protocol.Gemini, protocol.OpenAI, protocol.Anthropic, protocol.Responses},
	}
	for client, w := range want {
		if got := detectFamilies(client); !slices.Equal(got, w) {
			t.Errorf("%s: %v, want %v (docs/clients.md table)", client, got, w)
		}
	}
}
