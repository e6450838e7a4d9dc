package protocol

import (
	"net/url"
	"strings"
)

// Path returns the family's endpoint path appended to a channel base URL.
// Gemini puts the model and the method in the path.
func Path(f Family, model string, stream bool) string {
	switch f {
	case Anthropic:
		return "/v1/messages"
	case OpenAI:
		return "/v1/chat/completions"
	case Responses:
		return "/v1/responses"
	case Gemini:
		if stream {
			return "/v1beta/models/" + url.PathEscape(model) + ":streamGenerateContent?alt=sse"
		}
		return "/v1beta/models/" + url.PathEscape(model) + ":generateContent"
	}
	return ""
}

// UpstreamURL joins a channel URL and the family's path. A base that already
// ends in the path's version segment ("/v1", "/v1beta") does not get it
// twice; an exact URL is used as it is (for Gemini streams, ?alt=sse is
// still added so the answer is SSE).
func UpstreamURL(f Family, base string, exact bool, model string, stream bool) string {
	if exact {
		if f == Gemini && stream && !strings.Contains(base, "alt=sse") {
			if strings.Contains(base, "?") {
				return base + "&alt=sse"
			}
			return base + "?alt=sse"
		}
		return base
	}
	base = strings.TrimRight(base, "/")
	p := Path(f, model, stream)
	if v := p[:strings.IndexByte(p[1:], '/')+1]; strings.HasSuffix(base, v) {
		base = strings.TrimSuffix(base, v)
	}
	return base + p
}

// AnthropicVersion is sent upstream when the client did not send one
// (a converted request, or a client that omits it).
const AnthropicVersion = "2023-06-01"

// CredentialHeader names the header that carries an upstream key for the
// family and the prefix its value takes.
func CredentialHeader(f Family) (name, prefix string) {
	switch f {
	case Anthropic:
		return "x-api-key", ""
	case Gemini:
		return "x-goog-api-key", ""
	default:
		return "Authorization", "Bearer "
	}
}

// ClientCredentialHeaders are the headers a client may authenticate with;
// none of them is ever forwarded upstream.
var ClientCredentialHeaders = []string{"Authorization", "x-api-key", "x-goog-api-key", "api-key"}
