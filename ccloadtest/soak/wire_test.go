//go:build soak

package soak

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/tidwall/gjson"
)

// family is one client protocol the soak speaks to the gateway.
type family string

const (
	anthropic family = "anthropic"
	chat      family = "openai"
	responses family = "responses"
	gemini    family = "gemini"
)

var families = []family{anthropic, chat, responses, gemini}

// clientRequest is the path, headers and body of one client call.
type clientRequest struct {
	path   string
	header map[string]string
	body   string
}

// newClientRequest builds the smallest valid generation request of a
// family. marker ends up in the user text, where the mock's script reads it.
func newClientRequest(f family, model, token, marker string, stream bool) clientRequest {
	s := fmt.Sprint(stream)
	text := "hello " + marker
	switch f {
	case anthropic:
		return clientRequest{path: "/v1/messages",
			header: map[string]string{"x-api-key": token, "anthropic-version": "2023-06-01"},
			body:   `{"model":"` + model + `","max_tokens":16,"stream":` + s + `,"messages":[{"role":"user","content":"` + text + `"}]}`}
	case chat:
		return clientRequest{path: "/v1/chat/completions",
			header: map[string]string{"Authorization": "Bearer " + token},
			body:   `{"model":"` + model + `","stream":` + s + `,"messages":[{"role":"user","content":"` + text + `"}]}`}
	case responses:
		return clientRequest{path: "/v1/responses",
			header: map[string]string{"Authorization": "Bearer " + token},
			body:   `{"model":"` + model + `","stream":` + s + `,"input":"` + text + `"}`}
	default:
		path := "/v1beta/models/" + model + ":generateContent"
		if stream {
			path = "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
		}
		return clientRequest{path: path,
			header: map[string]string{"x-goog-api-key": token},
			body:   `{"contents":[{"role":"user","parts":[{"text":"` + text + `"}]}]}`}
	}
}

// answerText is the assistant text of a whole (non-stream) answer.
func answerText(f family, body []byte) string {
	var parts []gjson.Result
	switch f {
	case anthropic:
		parts = gjson.GetBytes(body, `content.#(type=="text")#.text`).Array()
	case chat:
		parts = gjson.GetBytes(body, "choices.0.message.content").Array()
	case responses:
		parts = gjson.GetBytes(body, `output.#(type=="message")#.content.#(type=="output_text")#.text|@flatten`).Array()
	default:
		parts = gjson.GetBytes(body, "candidates.0.content.parts.#.text").Array()
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.String())
	}
	return b.String()
}

// streamResult is what a client saw of one stream.
type streamResult struct {
	text    string // the concatenated text deltas, in order
	errText string // an error event's payload, if one came
	ended   bool   // the family's normal end marker arrived
}

// readStream reads a whole SSE answer the way an SDK would: text deltas
// are concatenated, an error event is remembered, the end marker noted.
func readStream(f family, r io.Reader, firstEvent func()) (streamResult, error) {
	var res streamResult
	var b strings.Builder
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var event string
	first := true
	for sc.Scan() {
		line := sc.Bytes()
		if v, ok := bytes.CutPrefix(line, []byte("event:")); ok {
			event = strings.TrimSpace(string(v))
			continue
		}
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if first && firstEvent != nil {
			firstEvent()
			first = false
		}
		if event == "error" || gjson.GetBytes(data, "error").Exists() || gjson.GetBytes(data, "type").Str == "error" ||
			gjson.GetBytes(data, "type").Str == "response.failed" {
			res.errText = string(data)
			continue
		}
		switch f {
		case anthropic:
			if gjson.GetBytes(data, "delta.type").Str == "text_delta" {
				b.WriteString(gjson.GetBytes(data, "delta.text").Str)
			}
			if gjson.GetBytes(data, "type").Str == "message_stop" {
				res.ended = true
			}
		case chat:
			if string(data) == "[DONE]" {
				res.ended = true
				continue
			}
			b.WriteString(gjson.GetBytes(data, "choices.0.delta.content").Str)
		case responses:
			switch gjson.GetBytes(data, "type").Str {
			case "response.output_text.delta":
				b.WriteString(gjson.GetBytes(data, "delta").Str)
			case "response.completed":
				res.ended = true
			}
		default:
			for _, p := range gjson.GetBytes(data, "candidates.0.content.parts.#.text").Array() {
				b.WriteString(p.String())
			}
			if gjson.GetBytes(data, "candidates.0.finishReason").Str != "" {
				res.ended = true
			}
		}
		event = ""
	}
	res.text = b.String()
	return res, sc.Err()
}
