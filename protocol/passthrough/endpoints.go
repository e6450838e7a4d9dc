// Package passthrough holds what ccload knows of the OpenAI endpoints it
// relays natively, without conversion to another family:
// embeddings, legacy completions, images, audio and moderations. Their
// paths and body kinds, the `model` field of a multipart form (read and
// renamed in place), and the usage their answers report.
package passthrough

import (
	"strings"
)

// Endpoint is one natively relayed OpenAI endpoint.
type Endpoint struct {
	// Path is the endpoint's path under the API version, "/embeddings".
	Path string
	// Form: the body is multipart/form-data (uploads), not JSON.
	Form bool
	// Binary: a success answer is not JSON (audio bytes); it is streamed
	// through as it arrives.
	Binary bool
	// Stream: the endpoint may answer with SSE when the body asks for it
	// (completions), relayed event by event like chat.
	Stream bool
}

// endpoints are the relayed endpoints by their path under /v1.
var endpoints = map[string]*Endpoint{
	"/embeddings":           {Path: "/embeddings"},
	"/completions":          {Path: "/completions", Stream: true},
	"/images/generations":   {Path: "/images/generations"},
	"/images/edits":         {Path: "/images/edits", Form: true},
	"/images/variations":    {Path: "/images/variations", Form: true},
	"/audio/transcriptions": {Path: "/audio/transcriptions", Form: true},
	"/audio/translations":   {Path: "/audio/translations", Form: true},
	"/audio/speech":         {Path: "/audio/speech", Binary: true},
	"/moderations":          {Path: "/moderations"},
}

// Lookup finds the endpoint a client path names: "/v1/embeddings", or
// "/embeddings" for clients whose base URL has no version (as ccload
// accepts "/chat/completions").
func Lookup(path string) (*Endpoint, bool) {
	ep, ok := endpoints[strings.TrimPrefix(path, "/v1")]
	return ep, ok
}

// URL joins a channel URL and the endpoint path as protocol.UpstreamURL
// does for chat: a base already ending in "/v1" does not get it twice. An
// exact channel URL names the chat endpoint; its "/chat/completions" is
// replaced by the endpoint path.
func (ep *Endpoint) URL(base string, exact bool) string {
	if exact {
		base = strings.TrimSuffix(base, "/chat/completions")
		return strings.TrimRight(base, "/") + ep.Path
	}
	base = strings.TrimRight(base, "/")
	if !strings.HasSuffix(base, "/v1") {
		base += "/v1"
	}
	return base + ep.Path
}
