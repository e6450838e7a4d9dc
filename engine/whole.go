package engine

import (
	"io"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/protocol/convert"
)

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
