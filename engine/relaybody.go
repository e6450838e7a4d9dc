package engine

import (
	"fmt"
	"io"
	"runtime/debug"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/protocol"
)

// relayBody is a stream's response body. fasthttp writes it from the
// connection's own goroutine through WriteTo, framing each Write as a
// chunk and flushing it, so a stream holds no goroutine and no pipe of its
// own. (SetBodyStreamWriter costs both: a goroutine running the writer and
// a pipe that the connection's goroutine copies from; at 10,000 streams
// they were most of the gateway's memory.)
type relayBody struct {
	e    *Engine
	a    *attempt
	run  func(w io.Writer) // the relay; called exactly once
	once sync.Once
}

// relayStream makes the committed attempt's stream the response body: the
// relay, not the handler, then closes the attempt, drops the request's
// body and finishes the request, when the stream ends.
func (e *Engine) relayStream(ctx *fasthttp.RequestCtx, a *attempt, run func(w io.Writer)) {
	a.r.relaying, a.relaying = true, true
	ctx.Response.SetBodyStream(&relayBody{e: e, a: a, run: run}, -1)
}

// WriteTo relays the stream to w, where each Write is one flushed chunk.
// fasthttp calls it once, after writing the response headers.
func (b *relayBody) WriteTo(w io.Writer) (int64, error) {
	b.once.Do(func() { b.relay(w) })
	return 0, nil // relay logs a failed write itself (499); fasthttp sees it on the connection
}

// relay runs the stream's relay and ends the request after it, whichever
// way it ended (a panic included: recoverStream).
func (b *relayBody) relay(w io.Writer) {
	e, a, run := b.e, b.a, b.run
	// Drop the body's reference to run: what run holds (the events held
	// back during the peek) is then garbage once the relay is done with
	// it, not when fasthttp releases the body.
	b.run, b.a = nil, nil
	r := a.r
	defer e.finish(r)
	defer r.dropBody()
	defer e.recoverStream(w, r)
	defer a.close()
	run(w)
}

// recoverStream is deferred by relay, before (so it runs after) nothing
// but finish. The relay runs after the handler returned, out of
// recoverRequest's reach, where an unrecovered panic would end the
// process: a panic mid-stream instead ends the client's stream with its
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

// SupportsBodyWriteTo tells fasthttp to use WriteTo rather than Read.
func (b *relayBody) SupportsBodyWriteTo() bool { return true }

// Read is never used while SupportsBodyWriteTo says true; a body that is
// read instead ends at once, and Close then ends the relay.
func (b *relayBody) Read([]byte) (int, error) { return 0, io.EOF }

// Close runs when fasthttp is done with the body. A body that was never
// written (a HEAD request, a connection gone before the headers) still
// relays into a writer that fails, which cancels the upstream, logs the
// request as abandoned and frees its slots.
func (b *relayBody) Close() error {
	b.once.Do(func() { b.relay(goneWriter{}) })
	return nil
}

type goneWriter struct{}

func (goneWriter) Write([]byte) (int, error) { return 0, errClientGone }
