package passthrough

import (
	"testing"

	"github.com/ccload/ccload/protocol/convert"
)

const boundary = "XyZ"

func form(parts ...string) []byte {
	var b []byte
	for i := 0; i+1 < len(parts); i += 2 {
		b = append(b, "--"+boundary+"\r\n"...)
		b = append(b, parts[i]+"\r\n\r\n"...)
		b = append(b, parts[i+1]+"\r\n"...)
	}
	return append(b, "--"+boundary+"--\r\n"...)
}

func TestRenameFormField(t *testing.T) {
	file := "Content-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\nContent-Type: audio/wav"
	model := "Content-Disposition: form-data; name=\"model\""
	cases := []struct {
		name string
		in   []byte
		want []byte
	}{
		{"model after a file whose bytes hold CRLF and a fake header",
			form(file, "RIFF\r\n\r\nname=\"model\"\r\n-", model, "whisper-client", "Content-Disposition: form-data; name=\"language\"", "en"),
			form(file, "RIFF\r\n\r\nname=\"model\"\r\n-", model, "whisper-1", "Content-Disposition: form-data; name=\"language\"", "en")},
		{"model first", form(model, "whisper-client", file, "x"), form(model, "whisper-1", file, "x")},
		{"no model field", form(file, "x"), form(file, "x")},
	}
	for _, c := range cases {
		got, err := RenameFormField(c.in, boundary, "model", "whisper-1")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(got) != string(c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	v, ok, err := FormField(form(file, "x", model, "m1"), boundary, "model")
	if err != nil || !ok || v != "m1" {
		t.Errorf("FormField = %q %v %v, want m1", v, ok, err)
	}
	if _, _, err := FormField([]byte("--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nunterminated"), boundary, "model"); err == nil {
		t.Error("an unterminated part must be an error")
	}
	if _, _, err := FormField([]byte("not a form"), boundary, "model"); err == nil {
		t.Error("a body without the boundary must be an error")
	}
}

func TestBoundary(t *testing.T) {
	if b, err := Boundary(`multipart/form-data; boundary="a b"`); err != nil || b != "a b" {
		t.Errorf("Boundary = %q %v", b, err)
	}
	for _, ct := range []string{"application/json", "multipart/form-data", ""} {
		if _, err := Boundary(ct); err == nil {
			t.Errorf("Boundary(%q) must fail", ct)
		}
	}
}

func TestURL(t *testing.T) {
	emb, _ := Lookup("/v1/embeddings")
	cases := []struct {
		base  string
		exact bool
		want  string
	}{
		{"https://api.openai.com/v1", false, "https://api.openai.com/v1/embeddings"},
		{"https://relay.example/", false, "https://relay.example/v1/embeddings"},
		{"https://relay.example/openai/v1/chat/completions", true, "https://relay.example/openai/v1/embeddings"},
	}
	for _, c := range cases {
		if got := emb.URL(c.base, c.exact); got != c.want {
			t.Errorf("URL(%q, %v) = %q, want %q", c.base, c.exact, got, c.want)
		}
	}
	if _, ok := Lookup("/embeddings"); !ok {
		t.Error("/embeddings (no version) must be served")
	}
	if _, ok := Lookup("/v1/files"); ok {
		t.Error("/v1/files is not relayed")
	}
}

func TestUsage(t *testing.T) {
	cases := []struct {
		body string
		want convert.Usage
	}{
		{`{"object":"list","usage":{"prompt_tokens":8,"total_tokens":8}}`, convert.Usage{Input: 8}},
		{`{"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`, convert.Usage{Input: 5, Output: 7}},
		{`{"usage":{"input_tokens":50,"output_tokens":4160,"total_tokens":4210,"input_tokens_details":{"text_tokens":50,"image_tokens":0}}}`, convert.Usage{Input: 50, Output: 4160}},
		{`{"text":"hi","usage":{"type":"duration","seconds":3}}`, convert.Usage{}},
		{`{"id":"modr-1","results":[]}`, convert.Usage{}},
		{`RIFF....`, convert.Usage{}},
	}
	for _, c := range cases {
		if got := Usage([]byte(c.body)); got != c.want {
			t.Errorf("Usage(%s) = %+v, want %+v", c.body, got, c.want)
		}
	}
}
