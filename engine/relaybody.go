package engine

import (
	"io"
	"sync"
)

// relayBody is a stream's response body. fasthttp writes it from the
// connection's own goroutine through WriteTo, framing each Write as a
// chunk and flushing it, so a stream holds no goroutine and no pipe of its
// own. (SetBodyStreamWriter costs both: a goroutine running the writer and
// a pipe that the connection's goroutine copies from; at 10,000 streams
// they were most of the gateway's memory.)
type relayBody struct {
	run  func(w io.Writer) // relay; called exactly once
	once sync.Once
}

// WriteTo relays the stream to w, where each Write is one flushed chunk.
// fasthttp calls it once, after writing the response headers.
func (b *relayBody) WriteTo(w io.Writer) (int64, error) {
	b.once.Do(func() { b.take()(w) })
	return 0, nil // relay logs a failed write itself (499); fasthttp sees it on the connection
}

// take hands out run and drops the body's reference to it: what run
// captured (the events held back during the peek) is then garbage once
// the relay is done with it, not when the stream ends.
func (b *relayBody) take() func(io.Writer) {
	run := b.run
	b.run = nil
	return run
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
	b.once.Do(func() { b.take()(goneWriter{}) })
	return nil
}

type goneWriter struct{}

func (goneWriter) Write([]byte) (int, error) { return 0, errClientGone }
