package engine

import (
	"context"
	"io"

	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/engine/upstream"
)

// sent is how the first phase of an upstream call ended: a 2xx answer
// whose body the caller reads (and closes), or a classified failure.
type sent struct {
	resp    *upstreamResponse // a 2xx answer; nil on failure
	status  int               // upstream HTTP status, 0 when none arrived
	body    []byte            // the error body, up to errorPeekBytes
	outcome failure.Outcome   // why it failed, when resp is nil
}

// send is the one send path of live attempts and probes (RunProbe), so a
// probe acts exactly as a request would: the same client choice, proxy,
// headers and cancellation, and the same classification of a setup or
// transport failure or an error status. rq.Ctx ends the call; when it was
// ended by one of the attempt's timers or a deadline, the failure is a
// timeout.
func (e *Engine) send(rq *upstreamRequest) sent {
	resp, err := e.upstream.Do(&rq.Request)
	if err != nil {
		return e.sendFailed(rq, err)
	}
	if rq.onResponse != nil {
		rq.onResponse(resp)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return e.refused(resp)
	}
	return sent{resp: resp, status: resp.StatusCode}
}

// sendFailed classifies a request that got no response.
func (e *Engine) sendFailed(rq *upstreamRequest, err error) sent {
	var o failure.Outcome
	switch err {
	case upstream.ErrBadProxy:
		o = failure.Outcome{Kind: failure.KindNetwork, Scope: failure.ScopeChannel, Retry: true, Message: err.Error()}
	case upstream.ErrBadURL:
		o = failure.Outcome{Kind: failure.KindNetwork, Scope: failure.ScopeURL, Retry: true, Message: err.Error()}
	default:
		o = failure.Classify(failure.Input{Err: err, Timeout: timedOut(rq.Ctx), Now: e.clock.Now()})
	}
	return sent{outcome: o}
}

// refused reads and classifies an upstream error status.
func (e *Engine) refused(resp *upstreamResponse) sent {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, errorPeekBytes))
	resp.Body.Close()
	o := failure.Classify(failure.Input{Status: resp.StatusCode, Header: resp.Header.Get, Body: b, Now: e.clock.Now()})
	return sent{status: resp.StatusCode, body: b, outcome: o}
}

// timedOut reports whether ctx was ended by a timer (an attempt's
// first-byte or total timeout, a probe's deadline) rather than cancelled.
func timedOut(ctx context.Context) bool { return timerCause(context.Cause(ctx)) }

// timerCause reports whether an attempt's context was ended by one of its
// timers (or the request's deadline), the cause being context.Cause.
func timerCause(cause error) bool {
	switch cause {
	case errFirstByteTimeout, errTotalTimeout, errRequestDeadline, context.DeadlineExceeded:
		return true
	}
	return false
}
