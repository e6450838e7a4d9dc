package engine

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert"
	"github.com/ccload/ccload/protocol/jsonwalk"
	"github.com/ccload/ccload/protocol/passthrough"
	"github.com/ccload/ccload/protocol/signature"
	"github.com/tidwall/sjson"
	"github.com/valyala/fasthttp"
)

// relay is how an attempt's answer becomes the client's. It is chosen
// once per attempt (chooseRelay): passed through when the upstream speaks
// the client's family (design §7: native traffic is never converted),
// converted otherwise. Whole answers, streams and error bodies all ask
// it, so nothing else compares the two families.
type relay interface {
	// request is the body sent up for the upstream model, and notes on
	// what a conversion dropped or approximated (convert.RequestWith).
	request(model string, opt convert.RequestOptions) (body []byte, notes []string, err error)
	// whole is the client's body for a whole 2xx upstream answer, the
	// usage it reports, and the Content-Type to set ("" keeps the
	// upstream's).
	whole(b []byte) (out []byte, u convert.Usage, contentType string, err error)
	// raw reports whether an answer of this Content-Type goes to the
	// client byte for byte, unparsed (speech audio, a relayed endpoint's
	// SSE).
	raw(contentType string) bool
	// content reports whether an upstream stream event carries output,
	// which ends the peek at a stream (stream.go).
	content(ev *protocol.Event) bool
	// open prepares to relay a committed stream; it runs before the
	// request's body is dropped. event relays one upstream event through
	// emit, end closes a stream that ended cleanly, usage is what the
	// stream reported so far.
	open()
	event(ev *protocol.Event, emit func([]byte)) error
	end(emit func([]byte)) error
	usage() convert.Usage
	// refusal is an upstream client-fault error body in the client's
	// shape.
	refusal(status int, body []byte) []byte
}

// chooseRelay picks the attempt's relay from the two families.
func chooseRelay(a *attempt) relay {
	r := a.r
	if a.family == r.ep.family {
		return &passRelay{r: r, family: a.family, endpoint: r.ep.pass != nil,
			hideUsage: a.family == protocol.OpenAI && !r.wantsChatUsage()}
	}
	return &convertRelay{a: a}
}

// passRelay relays an upstream of the client's own family: bytes go out as
// they came, read only for usage.
type passRelay struct {
	r      *request
	family protocol.Family
	// endpoint: a relayed OpenAI endpoint (passthrough.go), whose answers
	// have their own usage and content shapes.
	endpoint bool
	// hideUsage drops the usage chunk we asked an OpenAI Chat upstream for
	// when the client did not (passRelay.request).
	hideUsage bool
	track     *convert.UsageTracker // while a stream is relayed
}

// request is the client's own bytes with only the model renamed (and a
// Chat stream's usage asked for); reasoning signatures are prepared for
// the channel (nativeSignatures).
func (p *passRelay) request(model string, opt convert.RequestOptions) ([]byte, []string, error) {
	r, body := p.r, p.r.body
	if p.family == protocol.OpenAI && r.stream && !r.wantsChatUsage() {
		// Chat streams report usage only when asked; ask, and event hides
		// the extra usage chunk from this client, which did not (CLIENTS.md).
		var err error
		if body, err = sjson.SetBytes(body, "stream_options.include_usage", true); err != nil {
			return nil, nil, err
		}
	}
	var err error
	switch {
	case p.endpoint:
		body, err = r.passBody(body, model)
		return body, nil, err
	case p.family != protocol.Gemini && model != r.model: // Gemini's model is in the path
		if body, err = sjson.SetBytes(body, "model", model); err != nil {
			return nil, nil, err
		}
	}
	body, err = nativeSignatures(p.family, body, model, opt)
	return body, nil, err
}

func (p *passRelay) whole(b []byte) ([]byte, convert.Usage, string, error) {
	if p.endpoint {
		return b, passthrough.Usage(b), "", nil
	}
	return b, convert.UsageOf(p.family, b), "application/json", nil
}

func (p *passRelay) raw(contentType string) bool {
	return p.endpoint && !strings.Contains(strings.ToLower(contentType), "json")
}

// content: a completions chunk carries choices[].text where chat has a
// delta.
func (p *passRelay) content(ev *protocol.Event) bool {
	if !p.endpoint {
		return isContent(p.family, ev)
	}
	if ev.IsDone() {
		return true
	}
	d := jsonwalk.View(ev.Data) // not gjson: see isContent
	ch := jsonwalk.First(jsonwalk.Member(d, "choices"))
	if ch == "" {
		return jsonwalk.Member(d, "usage") != ""
	}
	return jsonwalk.Set(jsonwalk.Member(ch, "text")) || jsonwalk.Set(jsonwalk.Member(ch, "finish_reason"))
}

func (p *passRelay) open() { p.track = convert.NewUsageTracker(p.family) }

func (p *passRelay) event(ev *protocol.Event, emit func([]byte)) error {
	p.track.Observe(ev)
	if p.hideUsage && isChatUsageChunk(ev) {
		return nil // we asked for it; the client did not
	}
	emit(ev.Raw)
	return nil
}

func (p *passRelay) end(func([]byte)) error { return nil }

func (p *passRelay) usage() convert.Usage { return p.track.Usage() }

func (p *passRelay) refusal(_ int, body []byte) []byte { return body }

// convertRelay converts an upstream of another family into the client's
// (protocol/convert).
type convertRelay struct {
	a    *attempt
	conv convert.Stream // while a stream is relayed
}

func (c *convertRelay) request(model string, opt convert.RequestOptions) ([]byte, []string, error) {
	r := c.a.r
	return convert.RequestWith(r.ep.family, c.a.family, r.body, model, r.stream, opt)
}

func (c *convertRelay) whole(b []byte) ([]byte, convert.Usage, string, error) {
	r := c.a.r
	out, err := convert.ResponseWith(c.a.family, r.ep.family, b, r.model, convert.ResponseOptions{Request: r.body, Origin: originOf(c.a)})
	return out, convert.UsageOf(c.a.family, b), "application/json", err
}

func (c *convertRelay) raw(string) bool { return false }

func (c *convertRelay) content(ev *protocol.Event) bool { return isContent(c.a.family, ev) }

func (c *convertRelay) open() {
	r := c.a.r
	c.conv = convert.NewStreamWith(c.a.family, r.ep.family, r.model, convert.StreamOptions{
		OmitChatUsage: r.ep.family == protocol.OpenAI && !r.wantsChatUsage(),
		Request:       r.body,
		Origin:        originOf(c.a),
	})
}

func (c *convertRelay) event(ev *protocol.Event, emit func([]byte)) error {
	return c.conv.Event(ev, emit)
}

func (c *convertRelay) end(emit func([]byte)) error { return c.conv.Close(emit) }

func (c *convertRelay) usage() convert.Usage { return c.conv.Usage() }

func (c *convertRelay) refusal(status int, body []byte) []byte {
	return convert.ConvertError(c.a.family, c.a.r.ep.family, status, body)
}

// Reasoning signatures across upstreams (docs/reasoning.md). A signature
// is valid only at the upstream that minted it. Those ccload hands a client
// carry their origin (package signature), so the next turn sends each
// upstream only its own; what remains is an upstream that still refuses one
// it was sent: an untagged signature of the client's family sent to another
// channel of that family (another account or provider), or a tag this
// build cannot tell. Such a 400 is not the client's fault, so the same
// route is tried once more without any signature
// (attempt.retryWithoutSignatures).

// originOf is the upstream an answer comes from, for the tags of the
// signatures the client is handed.
func originOf(c *attempt) signature.Origin {
	return signature.NewOrigin(c.family, c.route.Channel.Name)
}

// nativeSignatures prepares the signatures of a client's own-family body
// for the channel it goes to (signature.Native): a body that carries no
// tag, on a request not being retried, is returned untouched.
func nativeSignatures(up protocol.Family, body []byte, model string, opt convert.RequestOptions) ([]byte, error) {
	out, _, err := signature.Native(up, body, opt.Origin, opt.DropSignatures, model)
	return out, err
}

// finishWhole reads a whole non-stream answer, checks it is not an error
// in disguise (HTTP 200 with an error body, design §6), has the attempt's
// relay turn it into the client's body and writes it in one piece.
func (e *Engine) finishWhole(ctx *fasthttp.RequestCtx, r *request, c *attempt) attemptResult {
	b, now, failed := e.readWhole(r, c)
	if failed != nil {
		return *failed
	}
	out, usage, contentType, err := c.relay.whole(b)
	if err != nil {
		o := failure.Outcome{Kind: failure.KindServer, Scope: failure.ScopeModel, Retry: true, Message: "upstream answer could not be converted: " + err.Error()}
		c.at.end(now, c.resp.StatusCode, o)
		return attemptResult{outcome: o, status: 502}
	}
	return e.answerWhole(ctx, r, c, now, out, usage, contentType)
}

// readWhole reads a 2xx upstream body to its end. It returns the body and when it was read, or the failed attempt:
// a body that broke off, or an error in disguise (HTTP 200 with an error
// body, design §6).
func (e *Engine) readWhole(r *request, c *attempt) ([]byte, time.Time, *attemptResult) {
	b, err := readAll(c.resp.Body)
	now := e.clock.Now()
	r.rec.upstreamEnded(now)
	if err != nil {
		o := failure.Classify(failure.Input{Err: err, Timeout: isTimeout(err), Now: now})
		c.at.end(now, c.resp.StatusCode, o)
		return nil, now, &attemptResult{outcome: o}
	}
	if o, bad := failure.SoftError(b); bad {
		c.at.end(now, c.resp.StatusCode, o)
		return nil, now, &attemptResult{outcome: o, status: 502, body: b, family: c.family}
	}
	return b, now, nil
}

// answerWhole ends the attempt as the winner and writes body to the
// client with the upstream's status and kept headers; contentType, when
// set, replaces the upstream's.
func (e *Engine) answerWhole(ctx *fasthttp.RequestCtx, r *request, c *attempt, now time.Time, body []byte, usage convert.Usage, contentType string) attemptResult {
	c.at.end(now, c.resp.StatusCode, failure.Outcome{})
	e.succeeded(r, c, now)
	r.rec.setUsage(usage)
	ctx.SetStatusCode(c.resp.StatusCode)
	copyResponseHeaders(ctx, c.resp.Header, contentType)
	overhead := r.rec.overheadMsNow(now)
	ctx.Response.Header.Set("x-ccload-overhead-ms", strconv.FormatInt(overhead, 10))
	// Raw: body is this answer's own (read from the upstream or converted
	// from what was), so fasthttp can write it from where it is instead of
	// copying it into a pooled buffer first (1.2% of the gateway's CPU on
	// the load benchmark's json scenario; perf).
	ctx.Response.SetBodyRaw(body)
	return attemptResult{done: true}
}

// maxUpstreamBody bounds a non-stream upstream answer held in memory.
const maxUpstreamBody = 64 << 20

// readAll reads an upstream body up to maxUpstreamBody. A body the client
// already holds whole (h1Body) is taken as it is, not copied; one of
// announced length is read into a buffer of that size at once rather than
// one grown by doubling.
func readAll(body io.Reader) ([]byte, error) {
	if w, ok := body.(interface{ Whole() ([]byte, bool) }); ok {
		if b, ok := w.Whole(); ok {
			return b[:min(len(b), maxUpstreamBody)], nil
		}
	}
	if s, ok := body.(interface{ Size() int }); ok && s.Size() >= 0 && s.Size() < maxUpstreamBody {
		b := make([]byte, 0, s.Size()+1) // +1: the read that sees EOF needs room
		for {
			n, err := body.Read(b[len(b):cap(b)])
			b = b[:len(b)+n]
			if err == io.EOF {
				return b, nil
			}
			if err != nil {
				return b, err
			}
			if len(b) == cap(b) {
				// Longer than announced: read on as a stream would be.
				rest, err := io.ReadAll(io.LimitReader(body, int64(maxUpstreamBody-len(b))))
				return append(b, rest...), err
			}
		}
	}
	return io.ReadAll(io.LimitReader(body, maxUpstreamBody))
}

// isTimeout reports whether a body read failed for a deadline.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &t) && t.Timeout()
}

// relayError hands an upstream client-fault error (400, 413, 422) to the
// client at once, in the client's shape.
func (e *Engine) relayError(ctx *fasthttp.RequestCtx, r *request, rl relay, status int, body []byte) {
	body = r.rec.red.Body(body)
	out := rl.refusal(status, body)
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(out)
	r.rec.fail(status, string(body), false)
}
