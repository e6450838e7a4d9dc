package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert"
	"github.com/ccload/ccload/protocol/jsonwalk"
)

// startStream peeks at an upstream stream until its first content event,
// holding back only the events before it, so that an error hidden in an
// HTTP 200 stream (design §6) can still be retried elsewhere. Once content
// arrives the attempt is committed: the held events and everything after
// them are relayed by the body stream writer, event by event, and no retry
// can happen any more (the client would see duplicated output).
func (e *Engine) startStream(ctx *fasthttp.RequestCtx, r *request, c *attempt) attemptResult {
	src := &flushingSource{r: c.resp.Body}
	rd := protocol.NewReader(src, 0)
	held, failed := e.peek(c, rd)
	if failed != nil {
		return *failed
	}
	e.commit(ctx, r, c, rd, src, held)
	return attemptResult{done: true}
}

// peek reads events until the first content event and returns what it
// held back, or the failed attempt.
func (e *Engine) peek(c *attempt, rd *protocol.Reader) ([]byte, *attemptResult) {
	var held []byte
	for {
		ev, err := rd.Next()
		if err != nil {
			return nil, e.peekFailed(c, err)
		}
		if o, bad := streamError(c.family, ev); bad {
			c.at.end(e.clock.Now(), c.resp.StatusCode, o)
			return nil, &attemptResult{outcome: o, status: 502, body: append([]byte(nil), ev.Data...), family: c.family}
		}
		held = append(held, ev.Raw...)
		if c.relay.content(ev) {
			return held, nil
		}
	}
}

// peekFailed ends an attempt whose stream broke or ended before content.
func (e *Engine) peekFailed(c *attempt, err error) *attemptResult {
	o := failure.Classify(failure.Input{Err: streamErr(err), Timeout: timerCause(context.Cause(c.resp.Ctx)), Now: e.clock.Now()})
	if err == io.EOF {
		o = failure.Outcome{Kind: failure.KindServer, Scope: failure.ScopeModel, Retry: true, Message: "upstream stream ended before any content"}
	}
	c.at.end(e.clock.Now(), c.resp.StatusCode, o)
	return &attemptResult{outcome: o, status: 0}
}

// commit makes the attempt the winner and hands the stream, and with it
// the attempt, to relay, which fasthttp runs once the handler returned.
func (e *Engine) commit(ctx *fasthttp.RequestCtx, r *request, c *attempt, rd *protocol.Reader, src *flushingSource, held []byte) {
	c.timers.gotContent()
	now := e.clock.Now()
	c.at.end(now, c.resp.StatusCode, failure.Outcome{})
	e.succeeded(r, c, now)

	ctx.SetStatusCode(fasthttp.StatusOK)
	copyResponseHeaders(ctx, c.resp.Header, "text/event-stream")
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.Response.Header.Set("X-Accel-Buffering", "no")
	dl := writeDeadline{conn: ctx.Conn(), d: r.snap.Server.Limits.StreamWriteTimeout.D()}
	if r.socket || r.inProcess {
		dl.conn = nil // the socket sets its own write deadline per frame; a channel test has no connection
	}
	s := &relayState{e: e, r: r, c: c, rd: rd, src: src, held: held, dl: dl}
	e.relayStream(ctx, c, s.run)
}

// run writes the committed stream to w. What the events that
// arrived together become goes out as one chunk, flushed right before the
// relay may wait for the upstream again (the HTTP/1.1 client's body's
// BeforeWait, or flushingSource): an event is never held back waiting for the next, and
// events that arrived together cost one write instead of one each (perf:
// the write per event was most of a stream's CPU). A write
// error means the client went away: the upstream request is cancelled at
// once. It runs after the handler returned, so it touches nothing of the
// RequestCtx.
func (s *relayState) run(w io.Writer) {
	e, r, c := s.e, s.r, s.c
	s.w = w
	s.emitFn = s.emit
	s.lastProgress = e.clock.Now()
	c.relay.open()
	// Nothing reads the client's body once the stream is committed (no
	// attempt follows, the relay took what it needs, as copies): an
	// agent's body is hundreds of KB, and a stream lasts minutes.
	r.dropBody()
	if bw, ok := c.resp.Body.(beforeWaiter); ok && bw.BeforeWait(s.flush) {
		defer bw.BeforeWait(nil)
	} else {
		s.src.before = s.flush
		defer func() { s.src.before = nil }()
	}

	err := s.replay() // what was held back during the peek, then the rest
	s.flush()
	for err == nil && s.werr == nil {
		var ev *protocol.Event
		ev, err = s.rd.Next()
		if err != nil {
			break
		}
		err = s.feed(ev)
		if s.pending() >= flushAt {
			s.flush()
		}
		if e.bus.Active() {
			s.progress()
		}
	}
	s.end(err)
}

// relayState is what relay keeps for one stream, on the heap beside the
// attempt it relays.
type relayState struct {
	e   *Engine
	r   *request
	c   *attempt
	rd  *protocol.Reader
	src *flushingSource
	// held is what the peek held back, replayed first.
	held []byte
	w    io.Writer
	dl   writeDeadline
	// out gathers what the events that arrived together become
	// (converted, one event may be several); flush hands it to w as one
	// chunk and the buffer back to its pool.
	out          *outBuf
	werr         error
	emitFn       func([]byte) // emit, made once
	lastProgress time.Time
	// ended: the upstream's closing event came (endsAnswer), so what the
	// client receives after it is complete.
	ended bool
}

// endsAnswer reports whether ev closes a complete answer in family's
// stream grammar. Gemini's streams have no such event: they end at EOF.
func endsAnswer(f protocol.Family, ev *protocol.Event) bool {
	switch f {
	case protocol.OpenAI:
		return ev.IsDone()
	case protocol.Anthropic:
		return string(ev.Name) == "message_stop"
	case protocol.Responses:
		n := string(ev.Name)
		return n == "response.completed" || n == "response.incomplete"
	}
	return false
}

func (s *relayState) emit(b []byte) {
	if s.werr == nil {
		if s.out == nil {
			s.out = outBufs.Get().(*outBuf)
		}
		s.out.b = append(s.out.b, redactEvent(s.r.rec.red, b)...)
	}
}

// pending is how many bytes emit gathered since the last flush.
func (s *relayState) pending() int {
	if s.out == nil {
		return 0
	}
	return len(s.out.b)
}

// flush writes what was gathered as one chunk and gives the buffer back:
// flush runs before every wait for the upstream, so a waiting stream holds
// no output buffer (perf: memory per stream).
func (s *relayState) flush() {
	if s.out == nil {
		return
	}
	if s.werr == nil && len(s.out.b) > 0 {
		s.dl.extend()
		_, s.werr = s.w.Write(s.out.b)
	}
	if cap(s.out.b) <= keepOut {
		s.out.b = s.out.b[:0]
		outBufs.Put(s.out)
	} // a burst's buffer is left to the collector
	s.out = nil
}

// outBuf is a pooled output buffer.
type outBuf struct{ b []byte }

var outBufs = sync.Pool{New: func() any { return &outBuf{b: make([]byte, 0, 1<<10)} }}

// keepOut is the largest output buffer that goes back to the pool: most
// flushes carry an event or two.
const keepOut = 2 << 10

func (s *relayState) feed(ev *protocol.Event) error {
	if endsAnswer(s.c.family, ev) {
		s.ended = true
	}
	return s.c.relay.event(ev, s.emitFn)
}

// replay feeds the events held back while the stream was peeked at.
func (s *relayState) replay() error {
	held := s.held
	s.held = nil
	hr := protocol.NewReaderSize(bytes.NewReader(held), 0, len(held))
	for {
		ev, err := hr.Next()
		if err != nil {
			return nil
		}
		if err := s.feed(ev); err != nil {
			return err
		}
	}
}

// progress publishes the stream's usage so far for live views, at most
// every progressEvery.
func (s *relayState) progress() {
	now := s.e.clock.Now()
	if now.Sub(s.lastProgress) < progressEvery {
		return
	}
	s.lastProgress = now
	s.r.rec.setUsage(s.usage())
	s.e.bus.Publish(s.r.event("progress", now))
}

func (s *relayState) usage() convert.Usage { return s.c.relay.usage() }

// end records how the stream ended: its usage, and why it failed if it
// did. err is what ended the read loop (io.EOF for a complete stream).
func (s *relayState) end(err error) {
	r := s.r
	s.flush()
	r.rec.upstreamEnded(s.e.clock.Now())
	if errors.Is(err, io.EOF) {
		if cerr := s.c.relay.end(s.emitFn); cerr != nil {
			err = cerr
		}
	}
	r.rec.setUsage(s.usage())
	var converted *convert.StreamError
	switch {
	case s.werr != nil:
		r.rec.fail(499, errClientGone.Error()+" or stopped reading for server.stream_write_timeout", true)
	case err != nil && !errors.Is(err, io.EOF) && r.gone.Load():
		// A client that hangs up once the closing event reached it had
		// the whole answer, and may close before the upstream does.
		if !s.ended {
			r.rec.fail(499, errClientGone.Error()+" during the stream", true)
		}
	case errors.As(err, &converted):
		// The converter already sent the client its error event.
		r.rec.fail(converted.Status, converted.Message, true)
	case err != nil && !errors.Is(err, io.EOF):
		// The stream broke after content went out: no retry is possible,
		// so end the client's stream with its protocol's error event.
		msg := "upstream stream failed: " + err.Error()
		if cause := context.Cause(s.c.resp.Ctx); cause != nil && cause != context.Canceled {
			msg = "upstream stream failed: " + cause.Error()
		}
		s.emit(protocol.ErrorEvent(r.ep.family, 502, msg))
		r.rec.fail(502, msg, true)
	}
	s.flush() // the error event, or what the converter's Close emitted
}

// flushAt is how much output may gather before it is written anyway,
// however much arrived together: it bounds a burst's buffer.
const flushAt = 4 << 10

// beforeWaiter is an upstream body that can run a func right before it
// reads the socket, the one read that may wait for the upstream
// (the HTTP/1.1 client's body). relay flushes there when it can, and
// before every read of the body otherwise (flushingSource).
type beforeWaiter interface {
	BeforeWait(f func()) bool
}

// flushingSource is the upstream body under a stream's event reader: the
// reader reads it only when the events it holds are used up, and before
// that read, which may wait for the network, before runs (relay flushes
// what it gathered), so nothing already converted waits on the upstream.
// A body that is a beforeWaiter flushes closer to the socket instead.
type flushingSource struct {
	r      io.Reader
	before func() // nil while the stream is peeked at
}

func (s *flushingSource) Read(p []byte) (int, error) {
	if s.before != nil {
		s.before()
	}
	return s.r.Read(p)
}

// progressEvery spaces "progress" events of a stream for live views.
const progressEvery = 500 * time.Millisecond

var usageKey = []byte(`"usage"`)

// isChatUsageChunk reports whether an OpenAI Chat chunk is the usage-only
// chunk (empty choices) that stream_options.include_usage adds.
func isChatUsageChunk(ev *protocol.Event) bool {
	if ev.IsDone() || !bytes.Contains(ev.Data, usageKey) {
		return false // the common case: one byte scan, no parse
	}
	return gjson.GetBytes(ev.Data, "choices.#").Int() == 0 && gjson.GetBytes(ev.Data, "usage").IsObject()
}

// streamError recognises an error event before any content: an SSE
// `event: error`, an error object in a data event, or a Responses
// `response.failed`.
func streamError(f protocol.Family, ev *protocol.Event) (failure.Outcome, bool) {
	if string(ev.Name) == "response.failed" {
		msg := gjson.GetBytes(ev.Data, "response.error.message").Str
		return failure.Outcome{Kind: failure.KindServer, Scope: failure.ScopeModel, Retry: true, Message: msg}, true
	}
	if string(ev.Name) == "error" || gjson.GetBytes(ev.Data, "error").Exists() || gjson.GetBytes(ev.Data, "type").Str == "error" {
		return failure.SoftError(ev.Raw)
	}
	return failure.Outcome{}, false
}

// isContent reports whether an event carries model output, ending the peek.
// Preamble events are held back, so an error event after them still fails
// over like an error before content: the client has seen nothing
// yet. They are Anthropic message_start, ping and a content_block_start
// with no text yet; a role-only Chat chunk; Responses response.created,
// in_progress, queued, and an output_item.added or content_part.added that
// carries no text. Keep-alive comments never reach here.
func isContent(f protocol.Family, ev *protocol.Event) bool {
	// jsonwalk, not gjson: a gjson path with an index took 2.5 KiB of
	// stack, on the deepest point of a stream's start (see dialAside).
	d := jsonwalk.View(ev.Data)
	switch f {
	case protocol.Anthropic:
		switch string(ev.Name) {
		case "message_start", "ping", "":
			return false
		case "content_block_start":
			// A block opens empty; some relays put the first text in it.
			return jsonwalk.Text(jsonwalk.Member(jsonwalk.Member(d, "content_block"), "text"))
		}
		return true
	case protocol.OpenAI:
		if ev.IsDone() {
			return true
		}
		ch := jsonwalk.First(jsonwalk.Member(d, "choices"))
		if ch == "" {
			return jsonwalk.Member(d, "usage") != ""
		}
		delta := jsonwalk.Member(ch, "delta")
		return jsonwalk.Set(jsonwalk.Member(delta, "content")) || jsonwalk.Member(delta, "tool_calls") != "" ||
			jsonwalk.Set(jsonwalk.Member(delta, "reasoning_content")) || jsonwalk.Set(jsonwalk.Member(delta, "refusal")) ||
			jsonwalk.Set(jsonwalk.Member(ch, "finish_reason"))
	case protocol.Responses:
		switch string(ev.Name) {
		case "response.created", "response.in_progress", "response.queued":
			return false
		case "response.output_item.added", "response.content_part.added":
			// An item or part opens empty; text arrives in deltas.
			return jsonwalk.Text(jsonwalk.Member(jsonwalk.Member(d, "part"), "text")) ||
				jsonwalk.Text(jsonwalk.Member(jsonwalk.First(jsonwalk.Member(jsonwalk.Member(d, "item"), "content")), "text"))
		}
		return true
	default: // Gemini: every chunk is a GenerateContentResponse
		return true
	}
}

// isEventStream reports whether a Content-Type is an SSE stream's.
func isEventStream(ct string) bool {
	return strings.HasPrefix(strings.ToLower(ct), "text/event-stream")
}

func streamErr(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// writeDeadline cuts a client that stops reading a stream.
// relay writes to the connection (relayBody); each flush moves the
// connection's write deadline d ahead, so a client that reads nothing for
// d makes a flush fail, and relay cancels the upstream and frees the
// request's slots. fasthttp sets the deadline afresh for the next response
// on the connection (headerReceived's WriteTimeout).
//
// The deadline is set d+d/4 ahead and moved again only once less than d
// is left, so a flush never faces less than d (a stalled client is cut
// after between d and 1.25d) and most flushes of a fast stream skip the
// SetWriteDeadline call (perf: it was ~3% of a stream's CPU).
type writeDeadline struct {
	conn net.Conn
	d    time.Duration
	at   time.Time // the deadline set last
}

func (w *writeDeadline) extend() {
	if w.d <= 0 || w.conn == nil {
		return
	}
	now := time.Now()
	if w.at.Sub(now) >= w.d {
		return
	}
	w.at = now.Add(w.d + w.d/4)
	w.conn.SetWriteDeadline(w.at)
}
