package engine

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tidwall/sjson"
	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/passthrough"
)

// OpenAI endpoints relayed natively: embeddings, completions,
// images, audio, moderations. They take the chat path through the engine
// (authentication, limits, routing by model, the attempt loop with its
// failover and cooldowns, the log row); what differs is here: the model
// may sit in a multipart form, only URLs that speak openai serve them (no
// conversion exists), and the answer may be JSON with usage, an SSE
// stream (completions), or bytes streamed through (speech).

// admitForm reads the model of a multipart body.
func (r *request) admitForm() *clientError {
	boundary, err := passthrough.Boundary(r.clientHeader("Content-Type"))
	if err != nil {
		return &clientError{Status: 400, Msg: r.passPath() + ": " + err.Error()}
	}
	m, ok, err := passthrough.FormField(r.body, boundary, "model")
	if err != nil {
		return &clientError{Status: 400, Msg: r.passPath() + ": " + err.Error()}
	}
	if !ok || m == "" {
		return &clientError{Status: 400, Msg: r.passPath() + `: the form has no "model" field`}
	}
	r.model = m
	// A streamed transcription is relayed unparsed: no usage is read.
	s, _, err := passthrough.FormField(r.body, boundary, "stream")
	if err != nil {
		return &clientError{Status: 400, Msg: r.passPath() + ": " + err.Error()}
	}
	r.unbooked = strings.EqualFold(strings.TrimSpace(s), "true")
	return nil
}

// passPath is the client path of a relayed endpoint, for messages.
func (r *request) passPath() string { return "/v1" + r.ep.pass.Path }

// clientHeader is a forwardable client header's value ("" when absent).
func (r *request) clientHeader(name string) string {
	for _, kv := range r.header {
		if strings.EqualFold(kv[0], name) {
			return kv[1]
		}
	}
	return ""
}

// speaksOpenAI reports whether a URL may be sent OpenAI traffic: it
// declares openai, or declares nothing (then the client's family is spoken).
func speaksOpenAI(u config.URL) bool {
	return len(u.Protocols) == 0 || slices.Contains(u.Protocols, protocol.OpenAI)
}

// passRoutes keeps the routes on channels with a URL that speaks openai.
// When none is left the model exists only behind other families, which
// these endpoints have no conversion to: a 400 that names the endpoint.
func passRoutes(r *request, routes []config.Route) ([]config.Route, *clientError) {
	out := make([]config.Route, 0, len(routes))
	for _, rt := range routes {
		if slices.ContainsFunc(rt.Channel.URLs, speaksOpenAI) {
			out = append(out, rt)
		}
	}
	if len(out) == 0 {
		return nil, &clientError{Status: 400, Msg: fmt.Sprintf(
			"%s is relayed only to channels that speak the OpenAI API, with no conversion; model %q is served only by channels that do not (their URLs declare other protocols)",
			r.passPath(), r.model)}
	}
	return out, nil
}

// passURLs drops, for a relayed endpoint, the channel's URLs that do not
// speak openai (the channel may have others that do).
func (r *request) passURLs(ch *config.Channel, urls []int) []int {
	return slices.DeleteFunc(slices.Clone(urls), func(i int) bool { return !speaksOpenAI(ch.URLs[i]) })
}

// passBody renames the model of a relayed endpoint's body, in the JSON or
// in the form.
func (r *request) passBody(body []byte, model string) ([]byte, error) {
	if model == r.model {
		return body, nil
	}
	if !r.ep.pass.Form {
		return sjson.SetBytes(body, "model", model)
	}
	boundary, err := passthrough.Boundary(r.clientHeader("Content-Type"))
	if err != nil {
		return nil, err
	}
	return passthrough.RenameFormField(body, boundary, "model", model)
}

// streamThrough relays a non-JSON answer byte for byte. The attempt is
// committed with the status line: the body is the client's from the first
// byte, so a break later ends the response short (logged incomplete).
func (e *Engine) streamThrough(ctx *fasthttp.RequestCtx, r *request, c *attempt) attemptResult {
	c.timers.gotContent()
	now := e.clock.Now()
	c.at.end(now, c.resp.StatusCode, failure.Outcome{})
	e.succeeded(r, c, now)
	ctx.SetStatusCode(c.resp.StatusCode)
	copyResponseHeaders(ctx, c.resp.Header, "")
	dl := writeDeadline{conn: ctx.Conn(), d: r.snap.Server.Limits.StreamWriteTimeout.D()}
	e.relayStream(ctx, c, func(w io.Writer) {
		r.dropBody() // nothing reads it any more
		buf := make([]byte, 32<<10)
		for {
			n, err := c.resp.Body.Read(buf)
			if n > 0 {
				dl.extend()
				if _, werr := w.Write(buf[:n]); werr != nil { // one flushed chunk (relayBody)
					r.rec.fail(499, errClientGone.Error()+" or stopped reading for server.stream_write_timeout", true)
					return
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				r.rec.fail(502, "upstream body failed: "+err.Error(), true)
				return
			}
		}
		r.rec.upstreamEnded(e.clock.Now())
	})
	return attemptResult{done: true}
}
