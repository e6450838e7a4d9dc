package securitytest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"mime/multipart"
	"strings"
	"testing"
)

// Finding: ccload read the first of two "model" keys, many upstreams the
// last: a token limited to allowed-* reached forbidden-x, and a second
// "stream": true streamed what the log row called non-stream, at $0. A
// body with a key twice in one object, at any depth, and a form with a
// field ccload reads twice, are refused with a 400 in the client's shape
// before anything is routed.
func TestDuplicateKeysRefused(t *testing.T) {
	m, up := startMock(t)
	sum := sha256.Sum256([]byte("sk-limited-token-0123456789"))
	limited := "  - {name: limited, token_sha256: " + hex.EncodeToString(sum[:]) + ", models: [\"allowed-*\"]}\n"
	yaml := replaceOnce(config("", up, ""), "models: [claude-x, gemini-x, gpt-x]", "models: [claude-x, gemini-x, gpt-x, allowed-x, forbidden-x]")
	s := start(t, yaml+limited)
	lim := map[string]string{"Authorization": "Bearer sk-limited-token-0123456789"}
	anth := map[string]string{"x-api-key": token}
	for _, tc := range []struct {
		name, path, body string
		hdr              map[string]string
		shape            string
	}{
		{"model twice", "/v1/chat/completions", `{"model":"allowed-x","messages":[{"role":"user","content":"hi"}],"model":"forbidden-x"}`, lim, `"type":"invalid_request_error"`},
		{"model escaped", "/v1/chat/completions", `{"model":"allowed-x","mod\u0065l":"forbidden-x","messages":[]}`, lim, `"type":"invalid_request_error"`},
		{"stream twice", "/v1/messages", `{"model":"claude-x","stream":false,"max_tokens":8,"messages":[{"role":"user","content":"hi"}],"stream":true}`, anth, `"type":"error"`},
		{"nested twice", "/v1/messages", `{"model":"claude-x","max_tokens":8,"messages":[{"role":"user","content":"hi","role":"assistant"}]}`, anth, `"type":"error"`},
		{"gemini twice", "/v1beta/models/gemini-x:generateContent", `{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"maxOutputTokens":1,"maxOutputTokens":99999}}`, map[string]string{"x-goog-api-key": token}, `"status":"INVALID_ARGUMENT"`},
	} {
		resp, body := do(t, "POST", s.URL+tc.path, tc.body, tc.hdr)
		if resp.StatusCode != 400 || !strings.Contains(body, tc.shape) || !strings.Contains(body, "twice") {
			t.Errorf("%s: got %d %s, want a 400 in the client's shape naming the key", tc.name, resp.StatusCode, body)
		}
	}

	var form bytes.Buffer
	w := multipart.NewWriter(&form)
	w.WriteField("model", "allowed-x")
	fw, _ := w.CreateFormFile("file", "a.wav")
	fw.Write([]byte("RIFF0000WAVE"))
	w.WriteField("model", "forbidden-x")
	w.Close()
	hdr := map[string]string{"Authorization": lim["Authorization"], "Content-Type": w.FormDataContentType()}
	resp, body := do(t, "POST", s.URL+"/v1/audio/transcriptions", form.String(), hdr)
	if resp.StatusCode != 400 || !strings.Contains(body, "twice") {
		t.Errorf("form with model twice: got %d %s, want 400", resp.StatusCode, body)
	}
	if n := len(m.Requests()); n != 0 {
		t.Fatalf("duplicate keys reached the upstream %d times", n)
	}
}
