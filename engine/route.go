package engine

import (
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/passthrough"
)

// op is what a proxy endpoint asks for.
type op int

const (
	opGenerate    op = iota // a model call, relayed upstream
	opCountTokens           // answered locally
	opListModels            // answered locally
	// opWarmUp is a WebSocket warm-up (generate: false): admitted and
	// logged as a turn, answered by the socket, sent to no upstream.
	opWarmUp
)

// endpoint is a parsed proxy path.
type endpoint struct {
	family protocol.Family
	op     op
	model  string // Gemini carries the model in the path
	stream bool   // Gemini carries the stream flag in the path
	// pass is set for an OpenAI endpoint relayed natively (passthrough.go).
	pass *passthrough.Endpoint
}

// route serves the request if its path is one of the engine's and reports
// whether it did.
func (e *Engine) route(ctx *fasthttp.RequestCtx) bool {
	path := string(ctx.Path())
	if path == "/health" {
		e.serveHealth(ctx)
		return true
	}
	if isSocket(ctx) {
		e.serveSocket(ctx)
		return true
	}
	ep, ok := parseEndpoint(string(ctx.Method()), path, ctx.Request.Header.Peek("anthropic-version") != nil)
	if !ok {
		return false
	}
	e.serveProxy(ctx, ep)
	return true
}

// parseEndpoint maps a method and path to a proxy endpoint (design §4).
func parseEndpoint(method, path string, anthropicHeader bool) (endpoint, bool) {
	if method == "GET" {
		switch path {
		case "/v1/models", "/models":
			f := protocol.OpenAI
			if anthropicHeader {
				f = protocol.Anthropic
			}
			return endpoint{family: f, op: opListModels}, true
		case "/v1beta/models", "/v1/models/":
			return endpoint{family: protocol.Gemini, op: opListModels}, true
		}
		return endpoint{}, false
	}
	if method != "POST" {
		return endpoint{}, false
	}
	switch path {
	case "/v1/messages":
		return endpoint{family: protocol.Anthropic}, true
	case "/v1/messages/count_tokens":
		return endpoint{family: protocol.Anthropic, op: opCountTokens}, true
	case "/v1/chat/completions", "/chat/completions":
		return endpoint{family: protocol.OpenAI}, true
	case "/v1/responses", "/responses", "/backend-api/codex/responses":
		return endpoint{family: protocol.Responses}, true
	}
	if p, ok := passthrough.Lookup(path); ok {
		return endpoint{family: protocol.OpenAI, pass: p}, true
	}
	for _, prefix := range []string{"/v1beta/models/", "/v1/models/"} {
		rest, ok := strings.CutPrefix(path, prefix)
		if !ok {
			continue
		}
		model, method, ok := strings.Cut(rest, ":")
		if !ok || model == "" {
			return endpoint{}, false
		}
		ep := endpoint{family: protocol.Gemini, model: model}
		switch method {
		case "generateContent":
		case "streamGenerateContent":
			ep.stream = true
		case "countTokens":
			ep.op = opCountTokens
		default:
			return endpoint{}, false
		}
		return ep, true
	}
	return endpoint{}, false
}

// pathFamily is the family whose error shape answers a request refused
// before its path is parsed (dot segments): the family of the endpoint the
// path aims at, read from its unescaped prefix, as parseEndpoint would;
// OpenAI's for anything else. A client's SDK parses its own shape only.
func pathFamily(raw []byte) protocol.Family {
	path, _, _ := strings.Cut(string(raw), "?")
	if u, err := url.PathUnescape(path); err == nil {
		path = u
	}
	switch {
	case strings.HasPrefix(path, "/v1beta/"),
		strings.HasPrefix(path, "/v1/models/") && strings.Contains(path, ":"):
		return protocol.Gemini
	case strings.HasPrefix(path, "/v1/messages"):
		return protocol.Anthropic
	case strings.HasPrefix(path, "/v1/responses"), strings.HasPrefix(path, "/responses"),
		strings.HasPrefix(path, "/backend-api/codex/"):
		return protocol.Responses
	}
	return protocol.OpenAI
}
