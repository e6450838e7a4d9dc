package securitytest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"mime/multipart"
	"strings"
	"testing"
)

// Finding: streamed image generation and streamed transcription were
// relayed without reading their usage, and speech (audio bytes) has none:
// logged at 0 tokens, $0 and not unpriced, so a cost_limit did not hold.
// An answer whose usage ccload cannot read is refused where a cost limit
// applies, like an unpriced model, and flagged unpriced where none does.
func TestUnbookableEndpointsUnderCostLimit(t *testing.T) {
	m, up := startMock(t)
	sum := sha256.Sum256([]byte("sk-capped-token-0123456789"))
	capped := "  - {name: capped, token_sha256: " + hex.EncodeToString(sum[:]) + ", cost_limit: 5}\n"
	yaml := replaceOnce(config("", up, ""), "models: [claude-x, gemini-x, gpt-x]", "models: [claude-x, gemini-x, gpt-x, img-x, stt-x, tts-x]")
	yaml = replaceOnce(yaml, "tokens:\n", "pricing:\n  img-x: {input: 1, output: 1}\n  stt-x: {input: 1, output: 1}\n  tts-x: {input: 1, output: 1}\ntokens:\n")
	s := start(t, yaml+capped)
	auth := map[string]string{"Authorization": "Bearer sk-capped-token-0123456789"}

	var form bytes.Buffer
	w := multipart.NewWriter(&form)
	w.WriteField("model", "stt-x")
	w.WriteField("stream", "true")
	fw, _ := w.CreateFormFile("file", "a.wav")
	fw.Write([]byte("RIFF0000WAVE"))
	w.Close()

	for _, tc := range []struct{ name, path, body, ctype string }{
		{"streamed image", "/v1/images/generations", `{"model":"img-x","prompt":"a cat","stream":true,"partial_images":1}`, "application/json"},
		{"speech", "/v1/audio/speech", `{"model":"tts-x","input":"hello","voice":"alloy"}`, "application/json"},
		{"streamed transcription", "/v1/audio/transcriptions", form.String(), w.FormDataContentType()},
	} {
		hdr := map[string]string{"Authorization": auth["Authorization"], "Content-Type": tc.ctype}
		resp, body := do(t, "POST", s.URL+tc.path, tc.body, hdr)
		if resp.StatusCode != 403 || !strings.Contains(body, "cost_limit") {
			t.Errorf("%s under a cost_limit: got %d %.200s, want 403 naming the cost_limit", tc.name, resp.StatusCode, body)
		}
	}
	if n := len(m.Requests()); n != 0 {
		t.Errorf("%d unbookable requests reached the upstream", n)
	}

	// Without a cost limit they are served, and their rows say unpriced.
	resp, body := do(t, "POST", s.URL+"/v1/audio/speech", `{"model":"tts-x","input":"hello","voice":"alloy"}`, map[string]string{"Authorization": "Bearer " + token})
	if resp.StatusCode != 200 {
		t.Fatalf("speech without a limit: %d %s", resp.StatusCode, body)
	}
	rows := s.logs(t, 4)
	if !rows[0].Unpriced || rows[0].Model != "tts-x" {
		t.Errorf("speech row: model %q unpriced %v, want flagged unpriced", rows[0].Model, rows[0].Unpriced)
	}
}
