package mockupstream

import (
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

type kind int

const (
	kindGenerate kind = iota
	kindCount
	kindModels
)

// route is what a request path names.
type route struct {
	family string // "" when nothing matched
	kind   kind
	method string
	model  string // Gemini: from the path
	stream bool   // Gemini: streamGenerateContent
}

// matchRoute matches the path by suffix, so a channel URL with a path prefix
// and an exact endpoint URL both land on the right family.
func matchRoute(r *http.Request) route {
	p := strings.TrimSuffix(r.URL.Path, "/")
	if i := strings.LastIndex(p, "/models/"); i >= 0 {
		model, action, ok := strings.Cut(p[i+len("/models/"):], ":")
		if ok && model != "" && !strings.Contains(model, "/") {
			switch action {
			case "generateContent":
				return route{family: Gemini, method: http.MethodPost, model: model}
			case "streamGenerateContent":
				return route{family: Gemini, method: http.MethodPost, model: model, stream: true}
			case "countTokens":
				return route{family: Gemini, kind: kindCount, method: http.MethodPost, model: model}
			}
		}
	}
	switch {
	case strings.HasSuffix(p, "/v1beta/models"):
		return route{family: Gemini, kind: kindModels, method: http.MethodGet}
	case strings.HasSuffix(p, "/messages/count_tokens"):
		return route{family: Anthropic, kind: kindCount, method: http.MethodPost}
	case strings.HasSuffix(p, "/messages"):
		return route{family: Anthropic, method: http.MethodPost}
	case strings.HasSuffix(p, "/chat/completions"):
		return route{family: OpenAI, method: http.MethodPost}
	case strings.HasSuffix(p, "/responses"):
		return route{family: Responses, method: http.MethodPost}
	case strings.HasSuffix(p, "/models"):
		// Anthropic and OpenAI share GET /v1/models; the Anthropic SDK
		// always sends anthropic-version.
		if r.Header.Get("anthropic-version") != "" {
			return route{family: Anthropic, kind: kindModels, method: http.MethodGet}
		}
		return route{family: OpenAI, kind: kindModels, method: http.MethodGet}
	}
	return route{}
}

// credential returns the key the request carries in its family's header.
func credential(family string, r *http.Request) string {
	bearer := ""
	if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		bearer = strings.TrimSpace(a[7:])
	}
	switch family {
	case Anthropic:
		if k := r.Header.Get("x-api-key"); k != "" {
			return k
		}
		return bearer
	case OpenAI, Responses:
		return bearer
	case Gemini:
		if k := r.Header.Get("x-goog-api-key"); k != "" {
			return k
		}
		return r.URL.Query().Get("key")
	}
	for _, k := range []string{r.Header.Get("x-api-key"), r.Header.Get("x-goog-api-key"), bearer} {
		if k != "" {
			return k
		}
	}
	return ""
}

func credentialHint(family string) string {
	switch family {
	case Anthropic:
		return "send x-api-key or Authorization: Bearer"
	case Gemini:
		return "send x-goog-api-key or ?key="
	}
	return "send Authorization: Bearer"
}

// checkRequest returns why the real API would reject a generation request
// with a 400, or "".
func checkRequest(family string, r *http.Request, body []byte, model string) string {
	if family == Anthropic && r.Header.Get("anthropic-version") == "" {
		return "anthropic-version: header is required"
	}
	if !gjson.ValidBytes(body) || !gjson.ParseBytes(body).IsObject() {
		return "request body is not a JSON object"
	}
	if model == "" {
		return "model: field required"
	}
	switch family {
	case Anthropic:
		if gjson.GetBytes(body, "max_tokens").Type != gjson.Number {
			return "max_tokens: field required"
		}
		if !gjson.GetBytes(body, "messages").IsArray() {
			return "messages: field required"
		}
	case OpenAI:
		if !gjson.GetBytes(body, "messages").IsArray() {
			return "messages: field required"
		}
	case Gemini:
		if !gjson.GetBytes(body, "contents").IsArray() {
			return "contents: field required"
		}
	}
	return ""
}
