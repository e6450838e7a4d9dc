package engine

import (
	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/protocol"
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
