package mockupstream

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// A Signer mock accepts the signatures it minted and answers any other
// with the provider's own 400.
func TestSignerRefusesForeignSignatures(t *testing.T) {
	opts := Options{Signer: "acct-1", Script: func(r *Recorded) Reply {
		return Reply{Thinking: "hm", Text: "ok"}
	}}
	_, base := start(t, opts)
	cases := []struct {
		family, path, body, wantErr string
	}{
		{Anthropic, "/v1/messages", `{"model":"c","max_tokens":9,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"x","signature":"SIG"},{"type":"text","text":"y"}]},{"role":"user","content":"more"}]}`,
			"Invalid `signature` in `thinking` block"},
		{Responses, "/v1/responses", `{"model":"g","input":[{"type":"message","role":"user","content":"hi"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"SIG"},{"type":"message","role":"user","content":"more"}]}`,
			"invalid_encrypted_content"},
		{Gemini, "/v1beta/models/gemini-3-pro:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"y","thoughtSignature":"SIG"}]},{"role":"user","parts":[{"text":"more"}]}]}`,
			"Corrupted thought signature."},
	}
	for _, c := range cases {
		t.Run(c.family, func(t *testing.T) {
			hdr := []string{"Authorization: Bearer k", "x-goog-api-key: k", "anthropic-version: 2023-06-01"}
			first := post(t, base+c.path, strings.ReplaceAll(c.body, `"SIG"`, `"`+mint(c.family, "acct-2", 1)+`"`), hdr...)
			b := readAll(t, first.Body)
			if first.StatusCode != 400 || !strings.Contains(string(b), c.wantErr) {
				t.Fatalf("foreign signature: %d %s", first.StatusCode, b)
			}
			// Its own signature, from a reply, is accepted.
			own := mint(c.family, "acct-1", 7)
			resp := post(t, base+c.path, strings.ReplaceAll(c.body, `"SIG"`, `"`+own+`"`), hdr...)
			b = readAll(t, resp.Body)
			if resp.StatusCode != 200 {
				t.Fatalf("own signature: %d %s", resp.StatusCode, b)
			}
			path := map[string]string{Anthropic: "content.0.signature", Responses: "output.0.encrypted_content", Gemini: "candidates.0.content.parts.0.thoughtSignature"}[c.family]
			if !signedBy(gjson.GetBytes(b, path).Str, c.family, "acct-1") {
				t.Errorf("reply not signed by the mock: %s", b)
			}
		})
	}
	// Anthropic with thinking on: a tool loop whose assistant turn does
	// not start with thinking is refused.
	body := `{"model":"c","max_tokens":9,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}]}`
	resp := post(t, base+"/v1/messages", body, "x-api-key: k", "anthropic-version: 2023-06-01")
	b := readAll(t, resp.Body)
	if resp.StatusCode != 400 || gjson.GetBytes(b, "error.type").Str != "invalid_request_error" || !strings.Contains(string(b), "must start with a thinking block") {
		t.Errorf("unsigned tool loop: %d %s", resp.StatusCode, b)
	}
}
