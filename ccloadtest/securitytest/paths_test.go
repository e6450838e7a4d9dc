package securitytest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// Finding: a Gemini path with a dot segment was refused in OpenAI's error
// shape. Every endpoint answers in its own family's shape, whatever it
// refuses; the SDKs parse nothing else.
func TestDotSegmentRefusedInTheFamilyShape(t *testing.T) {
	s := start(t, config("", "http://127.0.0.1:9", ""))
	for _, tc := range []struct {
		path, auth string
		shape      func(map[string]any) bool
	}{
		{"/v1beta/models/../models/gemini-x:generateContent", "x-goog-api-key: " + token, geminiShape},
		{"/v1beta/models/%2e%2e/gemini-x:streamGenerateContent?alt=sse", "x-goog-api-key: " + token, geminiShape},
		{"/v1/messages/../messages", "x-api-key: " + token, anthropicShape},
		{"/v1/chat/../chat/completions", "Authorization: Bearer " + token, openAIShape},
		{"/v1/responses/./", "Authorization: Bearer " + token, openAIShape},
	} {
		c := dial(t, s.Addr)
		body := `{"model":"x"}`
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", tc.path, tc.auth, len(body), body)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		var v map[string]any
		if resp.StatusCode != 400 || json.Unmarshal(b, &v) != nil || !tc.shape(v) {
			t.Errorf("%s: got %d %s, want a 400 in the endpoint's error shape", tc.path, resp.StatusCode, b)
		}
	}
}

func geminiShape(v map[string]any) bool {
	e, _ := v["error"].(map[string]any)
	_, code := e["code"].(float64)
	_, status := e["status"].(string)
	return code && status
}

func anthropicShape(v map[string]any) bool {
	e, _ := v["error"].(map[string]any)
	_, typ := e["type"].(string)
	return v["type"] == "error" && typ
}

func openAIShape(v map[string]any) bool {
	e, _ := v["error"].(map[string]any)
	_, typ := e["type"].(string)
	_, msg := e["message"].(string)
	_, param := e["param"]
	return typ && msg && param && v["type"] == nil
}

// Finding (same): an unknown method of a family's path is a 404 in that
// family's shape.
func TestUnknownEndpointInTheFamilyShape(t *testing.T) {
	s := start(t, config("", "http://127.0.0.1:9", ""))
	for path, shape := range map[string]func(map[string]any) bool{
		"/v1beta/models/gemini-x:embedThis": geminiShape,
		"/v1/messages/batches":              anthropicShape,
		"/v1/no-such-endpoint":              openAIShape,
	} {
		resp, b := do(t, "POST", s.URL+path, `{"model":"x"}`, map[string]string{"x-api-key": token})
		var v map[string]any
		if resp.StatusCode != 404 || json.Unmarshal([]byte(b), &v) != nil || !shape(v) {
			t.Errorf("%s: got %d %s, want a 404 in the endpoint's error shape", path, resp.StatusCode, b)
		}
	}
}
