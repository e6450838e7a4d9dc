package engine

import (
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/protocol"
)

// clientError is an answer ccload gives itself: Msg goes to the client in
// its protocol's error shape; it never holds keys or upstream hosts.
type clientError struct {
	Status int
	Msg    string
	// RetryAfter, when > 0, is sent as Retry-After: the upstreams' own
	// soonest wait, or the first recovery of what cools.
	RetryAfter time.Duration
}

func (c *clientError) Error() string { return c.Msg }

func writeError(ctx *fasthttp.RequestCtx, f protocol.Family, ce *clientError) {
	ctx.SetStatusCode(ce.Status)
	if ce.RetryAfter > 0 {
		// Whole seconds, rounded up: retrying a moment early only earns
		// another refusal.
		ctx.Response.Header.Set("Retry-After", strconv.FormatInt(int64((ce.RetryAfter+time.Second-1)/time.Second), 10))
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(protocol.ErrorBody(f, ce.Status, ce.Msg))
}
