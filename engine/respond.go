package engine

import (
	"errors"
	"fmt"

	"github.com/valyala/fasthttp"

	"ccload/protocol"
)

// clientError is an answer ccload gives itself: Msg goes to the client in
// its protocol's error shape; it never holds keys or upstream hosts.
type clientError struct {
	Status int
	Msg    string
}

func (c *clientError) Error() string { return c.Msg }

func writeError(ctx *fasthttp.RequestCtx, f protocol.Family, ce *clientError) {
	ctx.SetStatusCode(ce.Status)
	ctx.SetContentType("application/json")
	ctx.SetBody(protocol.ErrorBody(f, ce.Status, ce.Msg))
}

// ErrorHandler renders fasthttp's own request errors (a body over
// server.max_body_bytes above all) in the caller's protocol shape; set it as
// fasthttp.Server.ErrorHandler. A caller with a valid token gets a log row
// with the reason, like every other rejected request.
func (e *Engine) ErrorHandler(ctx *fasthttp.RequestCtx, err error) {
	ep, ok := parseEndpoint("POST", string(ctx.Path()), false)
	if !ok {
		ep.family = protocol.OpenAI
	}
	ce := &clientError{Status: fasthttp.StatusBadRequest, Msg: "malformed request: " + err.Error()}
	if errors.Is(err, fasthttp.ErrBodyTooLarge) {
		limit := e.cfg.Current().Server.MaxBodyBytes
		ce = &clientError{Status: fasthttp.StatusRequestEntityTooLarge,
			Msg: fmt.Sprintf("request body is over the server.max_body_bytes limit (%d bytes)", int64(limit))}
	}
	snap := e.cfg.Current()
	tok := authenticate(snap, clientToken(ctx))
	if !ok || tok == nil {
		writeError(ctx, ep.family, ce)
		return
	}
	r := e.newRequest(ctx, ep, snap, tok)
	e.inflight.Add(1)
	e.reject(ctx, r, ce)
}
