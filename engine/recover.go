package engine

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/protocol"
)

// A panic anywhere in one request's handling (a converter, the relay, a
// classifier) must cost that request only: it is answered with a 500 in its
// protocol's shape, logged with its stack, and gets its log row; the server
// keeps serving. The handler path and the stream relay (which runs on its
// own goroutine after the handler returned, where an unrecovered panic
// would end the process) each recover.

// recoverRequest is deferred by serveProxy. *rp is the request once it
// exists (nil while authenticating: no row for an unauthenticated caller).
func (e *Engine) recoverRequest(ctx *fasthttp.RequestCtx, ep endpoint, rp **request) {
	v := recover()
	if v == nil {
		return
	}
	e.log.Error("panic while serving a request; answered 500", "path", string(ctx.Path()), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	r := *rp
	if r != nil && r.finished.Load() {
		return // the answer and the row were already given; nothing to repair
	}
	ce := &clientError{Status: fasthttp.StatusInternalServerError, Msg: "internal error in ccload while serving this request"}
	ctx.Response.Reset()
	writeError(ctx, ep.family, ce)
	if r != nil {
		r.rec.fail(ce.Status, fmt.Sprintf("panic: %v", v), false)
		e.finish(r)
	}
}

// recoverStream is deferred by relay, before (so it runs after) nothing
// but finish: a panic mid-stream ends the client's stream with its
// protocol's error event, and the row says why.
func (e *Engine) recoverStream(w io.Writer, r *request) {
	v := recover()
	if v == nil {
		return
	}
	e.log.Error("panic while relaying a stream; stream ended with an error event", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	msg := "internal error in ccload while relaying this stream"
	_, _ = w.Write(protocol.ErrorEvent(r.ep.family, fasthttp.StatusInternalServerError, msg)) // one flushed chunk (relayBody); a failed write means the client is gone
	r.rec.fail(fasthttp.StatusInternalServerError, fmt.Sprintf("panic: %v", v), true)
}
