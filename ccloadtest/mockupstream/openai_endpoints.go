package mockupstream

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// The OpenAI endpoints besides Chat that ccload relays natively:
// embeddings, legacy completions, images, audio and moderations
// (https://platform.openai.com/docs/api-reference). They are recorded with
// Family OpenAI and answered from the same Reply: Status, Raw, delays and
// cuts apply; Text is the completion or transcript text, Usage the counts.

// openAIEndpoints maps a path suffix to whether the body is a multipart
// form and the form's file field.
var openAIEndpoints = []struct {
	suffix string
	form   bool
	file   string
}{
	{"/embeddings", false, ""},
	{"/images/generations", false, ""},
	{"/images/edits", true, "image"},
	{"/images/variations", true, "image"},
	{"/audio/transcriptions", true, "file"},
	{"/audio/translations", true, "file"},
	{"/audio/speech", false, ""},
	{"/moderations", false, ""},
}

// SpeechBytes is the audio body /audio/speech answers with (not real MP3
// frames: a fixed, recognisable byte string long enough to span reads).
var SpeechBytes = bytes.Repeat([]byte("ID3mock-speech\x00\x01\x02\xff"), 4096)

// openAIEndpoint returns the endpoint suffix a path names, or "". Legacy
// /completions is told from /chat/completions by its preceding segment.
func openAIEndpoint(path string) string {
	p := strings.TrimSuffix(path, "/")
	if strings.HasSuffix(p, "/completions") && !strings.HasSuffix(p, "/chat/completions") {
		return "/completions"
	}
	for _, e := range openAIEndpoints {
		if strings.HasSuffix(p, e.suffix) {
			return e.suffix
		}
	}
	return ""
}

// serveOpenAIEndpoint answers one of the endpoints above, checking the
// credential, the method and the body as the real API does.
func (s *Server) serveOpenAIEndpoint(w http.ResponseWriter, r *http.Request, ep string, body []byte, readErr error) {
	rec := Recorded{Family: OpenAI, Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: body, Key: credential(OpenAI, r)}
	var fields map[string][]string
	var files map[string][]*multipart.FileHeader
	formErr := ""
	if isFormEndpoint(ep) {
		fields, files, formErr = parseForm(r.Header.Get("Content-Type"), body)
		if v := fields["model"]; len(v) > 0 {
			rec.Model = v[0]
		}
	} else {
		rec.Model = gjson.GetBytes(body, "model").String()
		rec.Stream = gjson.GetBytes(body, "stream").Bool()
	}
	seq := s.record(rec)
	switch {
	case readErr != nil:
		s.fail(w, OpenAI, http.StatusRequestEntityTooLarge, "mock upstream: reading body: "+readErr.Error())
		return
	case rec.Key == "":
		s.fail(w, OpenAI, http.StatusUnauthorized, "mock upstream: missing credential (send Authorization: Bearer)")
		return
	case len(s.opts.Keys) > 0 && !slices.Contains(s.opts.Keys, rec.Key):
		s.fail(w, OpenAI, http.StatusUnauthorized, "mock upstream: invalid API key "+fingerprint(rec.Key))
		return
	case r.Method != http.MethodPost:
		s.fail(w, OpenAI, http.StatusMethodNotAllowed, "mock upstream: use POST for "+r.URL.Path)
		return
	}
	if msg := checkOpenAIEndpoint(ep, body, formErr, files, rec.Model); msg != "" {
		s.fail(w, OpenAI, http.StatusBadRequest, "mock upstream: "+msg)
		return
	}
	var rep Reply
	if s.opts.Script != nil {
		cp := rec.clone()
		rep = s.opts.Script(&cp)
	}
	if !wait(r.Context(), rep.FirstByteDelay) {
		return
	}
	t := &turn{rec: &rec, seq: seq, created: s.opts.Now(),
		includeUsage: gjson.GetBytes(body, "stream_options.include_usage").Bool()}
	setFamilyHeaders(w.Header(), t)
	switch {
	case rep.Raw != nil:
		writeBody(w, &rep, "application/json", rep.Raw)
	case rep.Status >= 400:
		writeBody(w, &rep, "application/json", errorBody(OpenAI, rep.Status, rep.errorMessage(rep.Status)))
	case ep == "/audio/speech":
		writeBody(w, &rep, "audio/mpeg", SpeechBytes)
	case ep == "/completions" && rec.Stream:
		writeStream(r.Context(), w, &rep, completionEvents(t, &rep))
	case isFormEndpoint(ep) && strings.HasPrefix(ep, "/audio/") && first(fields["response_format"]) == "text":
		writeBody(w, &rep, "text/plain; charset=utf-8", []byte(rep.text()+"\n"))
	default:
		writeBody(w, &rep, "application/json", openAIEndpointBody(ep, t, &rep))
	}
}

func isFormEndpoint(ep string) bool {
	for _, e := range openAIEndpoints {
		if e.suffix == ep {
			return e.form
		}
	}
	return false
}

func formFile(ep string) string {
	for _, e := range openAIEndpoints {
		if e.suffix == ep {
			return e.file
		}
	}
	return ""
}

// parseForm reads a multipart body; the message says why it is not one.
func parseForm(contentType string, body []byte) (map[string][]string, map[string][]*multipart.FileHeader, string) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, nil, "Content-Type must be multipart/form-data with a boundary"
	}
	f, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).ReadForm(maxBody)
	if err != nil {
		return nil, nil, "malformed multipart body: " + err.Error()
	}
	return f.Value, f.File, ""
}

func checkOpenAIEndpoint(ep string, body []byte, formErr string, files map[string][]*multipart.FileHeader, model string) string {
	if isFormEndpoint(ep) {
		if formErr != "" {
			return formErr
		}
		if name := formFile(ep); len(files[name]) == 0 {
			return name + ": file field required"
		}
	} else if !gjson.ValidBytes(body) || !gjson.ParseBytes(body).IsObject() {
		return "request body is not a JSON object"
	}
	if model == "" && ep != "/moderations" { // moderations has a default model
		return "model: field required"
	}
	switch ep {
	case "/embeddings", "/moderations":
		if !gjson.GetBytes(body, "input").Exists() {
			return "input: field required"
		}
	case "/completions":
		if !gjson.GetBytes(body, "prompt").Exists() {
			return "prompt: field required"
		}
	case "/images/generations":
		if gjson.GetBytes(body, "prompt").Str == "" {
			return "prompt: field required"
		}
	case "/audio/speech":
		if gjson.GetBytes(body, "input").Str == "" || gjson.GetBytes(body, "voice").Str == "" {
			return "input and voice: fields required"
		}
	}
	return ""
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// text is the reply's text, DefaultText when unset.
func (r *Reply) text() string {
	if r.Text != "" {
		return r.Text
	}
	return DefaultText
}

func (r *Reply) usage() Usage {
	if r.Usage == (Usage{}) {
		return DefaultUsage()
	}
	return r.Usage
}

// openAIEndpointBody renders the JSON answer of a non-stream request.
func openAIEndpointBody(ep string, t *turn, rep *Reply) []byte {
	u := rep.usage()
	body := t.rec.Body
	switch ep {
	case "/embeddings":
		n := 1
		if in := gjson.GetBytes(body, "input"); in.IsArray() {
			n = len(in.Array())
		}
		b64 := gjson.GetBytes(body, "encoding_format").Str == "base64"
		data := make([]map[string]any, n)
		for i := range data {
			vec := []float32{0.125, -0.25, 0.5, float32(i)}
			var emb any = vec
			if b64 {
				buf := make([]byte, 0, 4*len(vec))
				for _, f := range vec {
					buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(f))
				}
				emb = base64.StdEncoding.EncodeToString(buf)
			}
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": emb}
		}
		return jsonOf(map[string]any{"object": "list", "data": data, "model": t.rec.Model,
			"usage": map[string]int{"prompt_tokens": u.Input, "total_tokens": u.Input}})
	case "/completions":
		return jsonOf(map[string]any{"id": t.id("cmpl-mock"), "object": "text_completion", "created": t.created.Unix(),
			"model": t.rec.Model, "choices": []map[string]any{{"text": rep.text(), "index": 0, "logprobs": nil, "finish_reason": "stop"}},
			"usage": map[string]int{"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output}})
	case "/images/generations", "/images/edits", "/images/variations":
		return jsonOf(map[string]any{"created": t.created.Unix(),
			"data": []map[string]any{{"b64_json": base64.StdEncoding.EncodeToString([]byte("mock-png")), "revised_prompt": nil}},
			"usage": map[string]any{"input_tokens": u.Input, "output_tokens": u.Output, "total_tokens": u.Input + u.Output,
				"input_tokens_details": map[string]int{"text_tokens": u.Input, "image_tokens": 0}}})
	case "/audio/transcriptions", "/audio/translations":
		return jsonOf(map[string]any{"text": rep.text(),
			"usage": map[string]any{"type": "tokens", "input_tokens": u.Input, "output_tokens": u.Output, "total_tokens": u.Input + u.Output}})
	default: // moderations
		model := t.rec.Model
		if model == "" {
			model = "omni-moderation-latest"
		}
		return jsonOf(map[string]any{"id": t.id("modr-mock"), "model": model,
			"results": []map[string]any{{"flagged": false, "categories": map[string]bool{"violence": false},
				"category_scores": map[string]float64{"violence": 0.0001}}}})
	}
}

// completionEvents is a legacy completions stream: the text in two chunks,
// a finish chunk, the usage chunk when asked for, [DONE].
func completionEvents(t *turn, rep *Reply) [][]byte {
	text := rep.text()
	half := len(text) / 2
	chunk := func(s string, finish any) []byte {
		return sseEvent("", jsonOf(map[string]any{"id": t.id("cmpl-mock"), "object": "text_completion", "created": t.created.Unix(),
			"model": t.rec.Model, "choices": []map[string]any{{"text": s, "index": 0, "logprobs": nil, "finish_reason": finish}}}))
	}
	ev := [][]byte{chunk(text[:half], nil), chunk(text[half:], nil), chunk("", "stop")}
	if t.includeUsage {
		u := rep.usage()
		ev = append(ev, sseEvent("", jsonOf(map[string]any{"id": t.id("cmpl-mock"), "object": "text_completion",
			"created": t.created.Unix(), "model": t.rec.Model, "choices": []any{},
			"usage": map[string]int{"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output}})))
	}
	return append(ev, []byte("data: [DONE]\n\n"))
}
