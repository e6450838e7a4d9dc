package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/engine/upstream"
	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert"
	"github.com/ccload/ccload/protocol/signature"
)

// attemptResult is how one upstream attempt ended.
type attemptResult struct {
	done    bool            // the client has its answer: success, client fault or committed stream
	outcome failure.Outcome // why it failed, when !done
	status  int             // upstream HTTP status, 0 when none arrived
	body    []byte          // upstream error body, reported if every attempt fails
	family  protocol.Family // the family body is in
	// miss: a protocol detection miss (detect.go), which cools nothing.
	miss bool
}

// errClientGone ends an attempt whose client hung up (request.HungUp).
var errClientGone = errors.New("client disconnected")

// attemptLoop visits the request's routes in the order of the routing
// rule (select.go) until one answers or routing.max_attempts is spent,
// then answers with the last failure, or 503 when nothing could be tried.
func (e *Engine) attemptLoop(ctx *fasthttp.RequestCtx, r *request, routes []config.Route) {
	now := e.clock.Now()
	p := e.planRoutes(r, routes, now)
	var last *attemptResult
	for _, c := range p.usable {
		if !r.mayAttempt(e.clock.Now()) {
			break
		}
		res, done := e.tryRoute(ctx, r, c, p)
		if done {
			return
		}
		if res != nil {
			last = res
		}
	}
	e.unserved(ctx, r, last, p, now)
}

// planRoutes orders the routes and leaves out those that cannot be tried
// now.
func (e *Engine) planRoutes(r *request, routes []config.Route, now time.Time) *routePlan {
	hs := r.snap.Routing.HealthScore
	ordered := e.orderRoutes(routes, func(ch *config.Channel) float64 { return e.effectivePriority(ch, hs, now) })
	p := e.plan(r, ordered, now)
	e.preferPinned(r, &p, now)
	return &p
}

// unserved answers a request no attempt answered.
func (e *Engine) unserved(ctx *fasthttp.RequestCtx, r *request, last *attemptResult, p *routePlan, now time.Time) {
	switch {
	case r.outOfTime(e.clock.Now()):
		e.reject(ctx, r, r.deadlineError(last))
	case last == nil:
		e.reject(ctx, r, p.unavailable(r.model, now))
	default:
		e.giveUp(ctx, r, last)
	}
}

// giveUp answers when no attempt succeeded: the last upstream error in the
// client's shape, or 503 when nothing could even be tried.
func (e *Engine) giveUp(ctx *fasthttp.RequestCtx, r *request, last *attemptResult) {
	if last == nil {
		e.reject(ctx, r, &clientError{Status: 503, Msg: fmt.Sprintf("every channel serving model %q is cooling down or unavailable", r.model)})
		return
	}
	status := last.status
	if status < 400 {
		status = 502
		if last.outcome.Kind == failure.KindTimeout {
			status = 504
		}
	}
	msg := fmt.Sprintf("no upstream could serve model %q after %d attempt(s); last failure: %s", r.model, r.attempts, last.outcome.Message)
	ce := &clientError{Status: status, Msg: msg}
	if status == 429 || status == 503 || status == 529 {
		ce.RetryAfter = r.retryAfter // the soonest wait an upstream gave
	}
	e.reject(ctx, r, ce)
}

// tryRoute runs the attempts of one route: its keys and URLs in order
// until one answers, the failure names a wider scope, or max_attempts is
// spent. It reports whether the client has its answer, and otherwise the
// last failure (nil when nothing was sent).
func (e *Engine) tryRoute(ctx *fasthttp.RequestCtx, r *request, c candidate, p *routePlan) (last *attemptResult, done bool) {
	ch := c.route.Channel
	slot := e.reg.channelLoad.get(ch.Name)
	if reason := slot.Admit(e.clock.Now(), ch.RPMLimit, ch.MaxConcurrency); reason != "" {
		p.note(ch.Name + " is at its " + reason)
		return nil, false
	}
	// The slot is held until the response ends (finish releases r.chSlot)
	// when this route answers, and given back here otherwise.
	r.chSlot = slot
	defer func() {
		if !done {
			slot.Release()
			r.chSlot = nil
		}
	}()
	keys, urls := e.attemptOrder(r, c)
	oauth := ch.OAuth != "" // subscription accounts stand for its keys (accounts.go)
	if len(keys) == 0 && oauth {
		e.noAccountLeft(ch, p)
	}
	retried := false // an account's expired token renewed once
	for ki, ui := 0, 0; ki < len(keys) && ui < len(urls) && r.mayAttempt(e.clock.Now()); {
		if r.gone.Load() {
			return nil, e.abandoned(ctx, r)
		}
		e.claimTrials(c.route, keys[ki], urls[ui])
		res := e.try(ctx, r, c.route, keys[ki], urls[ui])
		if res.done {
			return nil, true
		}
		if r.gone.Load() {
			// The client's leaving (engine/listen) ended the attempt, which
			// says nothing of the route.
			return nil, e.abandoned(ctx, r)
		}
		last = res
		if r.ranOutOfTime(*res, e.clock.Now()) {
			return last, false // the request's deadline, not the route: nothing cools
		}
		var retry, handled bool
		if oauth {
			retry, handled = e.accountAnswer(r, c.route, keys[ki], res, &retried)
		}
		if retry {
			continue
		}
		if !res.miss && !handled {
			e.failed(r, c.route, keys[ki], urls[ui], res.outcome)
		}
		switch res.outcome.Scope {
		case failure.ScopeKey:
			ki++
		case failure.ScopeURL:
			ui++
		default:
			return last, false
		}
	}
	return last, false
}

// abandoned ends a request whose client hung up while it waited for an
// upstream: no further attempt, nothing cooled, 499 on the log row. It
// reports true (the request is done).
func (e *Engine) abandoned(ctx *fasthttp.RequestCtx, r *request) bool {
	e.reject(ctx, r, &clientError{Status: 499, Msg: errClientGone.Error() + " while waiting for the upstream"})
	return true
}

// attemptOrder is the order in which a route's keys and URLs are tried.
func (e *Engine) attemptOrder(r *request, c candidate) (keys, urls []int) {
	ch := c.route.Channel
	keys, urls = e.keyOrder(ch, c.anyway), e.urlOrder(ch, c.anyway)
	keys = pinnedFirst(r, ch, keys, func(i int) string { return e.reg.keyID(ch.Keys[i]) }, r.pin.Key)
	urls = pinnedFirst(r, ch, urls, func(i int) string { return e.reg.urlID(ch.URLs[i].URL) }, r.pin.URL)
	if r.ep.pass != nil {
		urls = r.passURLs(ch, urls) // a relayed endpoint: only URLs that speak openai
	}
	return keys, urls
}

// failed counts a failed attempt against the channel's health and cools
// what it names.
func (e *Engine) failed(r *request, rt config.Route, ki, ui int, o failure.Outcome) {
	e.reg.health.get(rt.Channel.Name).Add(e.clock.Now(), true)
	if o.RetryAfter > 0 && (r.retryAfter == 0 || o.RetryAfter < r.retryAfter) {
		r.retryAfter = o.RetryAfter
	}
	e.strikeScope(r.snap, rt, ki, ui, o)
}

// succeeded clears the scopes this attempt proved healthy and records the
// winning route on the log row.
func (e *Engine) succeeded(r *request, c *attempt, now time.Time) {
	ch := c.route.Channel
	ttfb := now.Sub(c.started)
	e.reg.health.get(ch.Name).Add(now, false)
	e.reg.observeURL(ch.Name, ch.URLs[c.urlIndex].URL, float64(ttfb.Milliseconds()))
	e.reg.cooldowns.Success(e.keyScope(ch, c.keyIndex))
	e.reg.cooldowns.Success(e.urlScope(ch, c.urlIndex))
	e.reg.cooldowns.Success(modelScope(ch, c.route.Upstream))
	e.reg.cooldowns.Success(channelScope(ch)) // ends a promoted cooldown or its half-open trial
	r.rec.won(c, now.Sub(r.start))
	e.repin(r, c, now)
	if e.bus.Active() {
		e.bus.Publish(r.event("first_byte", now))
	}
}

// try sends the request to one channel, key and URL. It returns done
// once the client has an answer; otherwise the classified failure.
// The result is on the heap: tryRoute keeps the last failure.
func (e *Engine) try(ctx *fasthttp.RequestCtx, r *request, rt config.Route, ki, ui int) *attemptResult {
	u := &rt.Channel.URLs[ui]
	res := new(attemptResult)
	// A URL that declares no protocols is probed for the family it speaks
	// (detect.go), unless its path is fixed (exact: a 404 says nothing of
	// the family) or the endpoint is relayed (no conversion to try).
	if len(u.Protocols) == 0 && !u.Exact && r.ep.pass == nil {
		*res = e.detectAttempt(ctx, r, rt, ki, ui)
	} else {
		*res = e.attemptAs(ctx, r, rt, ki, ui, upstreamFamily(u, r.ep.family))
	}
	return res
}

// upstreamFamily picks the protocol to speak to a URL: the client's own
// when the URL declares it or declares nothing (an exact URL or a relayed
// endpoint; other undeclared URLs are probed, detect.go), else the first
// declared.
func upstreamFamily(u *config.URL, client protocol.Family) protocol.Family {
	if len(u.Protocols) == 0 {
		return client
	}
	for _, p := range u.Protocols {
		if p == client {
			return client
		}
	}
	return u.Protocols[0]
}

// attemptAs is try speaking family up to the URL: one attempt, or two
// when the upstream refused a reasoning signature (retryWithoutSignatures).
func (e *Engine) attemptAs(ctx *fasthttp.RequestCtx, r *request, rt config.Route, ki, ui int, up protocol.Family) attemptResult {
	for {
		res, again := e.newAttempt(r, rt, ki, ui, up).run(ctx)
		if !again {
			return res
		}
	}
}

// attempt is one try of one route, key and URL, from its log entry to its
// cleanup: the upstream request, its context and timers, the answer and
// how it is relayed. It lives on the heap, so the frames of the functions
// that run it stay small however much an attempt holds: a request's
// deepest point (and a stream's wait) must fit the 8 KiB stack a
// goroutine keeps (TestRequestsFitEightKiBStack).
type attempt struct {
	e        *Engine
	r        *request
	route    config.Route
	keyIndex int
	urlIndex int
	family   protocol.Family
	at       *attemptLog
	started  time.Time
	// relay turns the answer into the client's (relay.go).
	relay relay
	// cancel ends the upstream request's context; nil until prepare.
	cancel context.CancelCauseFunc
	timers attemptTimers
	// rq is the request sent up, cleared once an answer arrived.
	rq   upstreamRequest
	resp *upstreamResponse
	// headerWait is the HTTP/1.1 connection waiting for this attempt's
	// answer headers, which a hang-up closes (request.leave).
	headerWait upstream.HeaderWait
	// relaying: a committed stream's relay, which runs after the handler
	// returned, owns the attempt and closes it when the stream ends.
	relaying bool
}

// newAttempt logs a new attempt and chooses how its answer is relayed.
func (e *Engine) newAttempt(r *request, rt config.Route, ki, ui int, up protocol.Family) *attempt {
	ch := rt.Channel
	r.attempts++
	now := e.clock.Now()
	a := &attempt{e: e, r: r, route: rt, keyIndex: ki, urlIndex: ui, family: up, started: now,
		at: r.rec.begin(ch.Name, e.reg.keyID(ch.Keys[ki]), e.reg.urlID(ch.URLs[ui].URL), up, rt.Upstream, now)}
	a.relay = chooseRelay(a)
	return a
}

// close ends the attempt: its timers, its context and the upstream body.
// It is the one cleanup of every attempt, whichever way it ended.
func (a *attempt) close() {
	a.timers.stop()
	if a.cancel != nil {
		a.cancel(nil)
	}
	if a.resp != nil {
		a.resp.Body.Close()
	}
}

// run sends the attempt and turns its answer into the client's. again
// asks attemptAs for one more attempt on the same route. The attempt is
// closed when run returns, whichever way, unless a stream went to the
// client: its relay closes it when the stream ends (stream.go).
func (a *attempt) run(ctx *fasthttp.RequestCtx) (res attemptResult, again bool) {
	defer func() {
		if !a.relaying {
			a.close()
		}
	}()
	e, r, ch := a.e, a.r, a.route.Channel
	body, ok := a.body(ctx)
	if !ok {
		return attemptResult{done: true}, false
	}
	a.prepare(body)
	var failed *attemptResult
	switch { // the credential the channel puts on the request
	case ch.Credentials == config.CredentialsClient:
		failed = clientCredentialFor(r, a) // the client's own (auth.go)
	case ch.OAuth != "":
		failed = e.accountFor(r, a) // a subscription account's (accounts.go)
	}
	if failed != nil {
		return *failed, false
	}
	var s sent
	if r.socket && ch.WebSockets && a.family == protocol.Responses && ch.Proxy == "" {
		a.timers.Arm()
		slot := ch.Name + "\x00" + e.reg.keyID(ch.Keys[a.keyIndex]) + "\x00" + a.rq.URL
		s = e.sendSocket(&a.rq, r.ups, slot, func(n string) { a.at.note([]string{n}) })
	} else {
		s = e.send(&a.rq)
	}
	if s.resp == nil {
		return a.unanswered(ctx, &s)
	}
	// The request is sent; what the answer needs of it is in a and r, and
	// a stream should not keep the (maybe converted) body alive.
	a.rq = upstreamRequest{}
	a.resp = s.resp
	if r.probe != nil {
		r.probeFound(a.family) // detection learned what the URL speaks
	}
	return a.answer(ctx), false
}

// body is the body sent up, or false when the request cannot be
// expressed for this upstream; the client then has its 400: the client's
// fault (design §7), never a silent drop.
func (a *attempt) body(ctx *fasthttp.RequestCtx) ([]byte, bool) {
	e, r, rt, up := a.e, a.r, a.route, a.family
	body, notes, err := a.relay.request(rt.Upstream, convert.RequestOptions{
		HostedSearch: rt.Channel.WebSearch, Checked: r.bodyChecked,
		Origin: signature.NewOrigin(up, rt.Channel.Name), DropSignatures: r.dropSignatures,
	})
	if r.socket {
		notes = append(notes, "transport: websocket")
	}
	a.at.note(notes)
	if err == nil {
		body, err = rewriteBody(rt.Channel.Rewrite.Body, body)
	}
	if err == nil && up == protocol.Responses && rt.Channel.OAuth == config.OAuthCodex {
		var dialect []string
		body, dialect, err = codexDialect(body)
		a.at.note(dialect)
	}
	if err != nil {
		ce := &clientError{Status: 400, Msg: err.Error()}
		a.at.end(e.clock.Now(), 400, failure.Outcome{Kind: failure.KindClient, ClientFault: true, Message: ce.Msg})
		e.reject(ctx, r, ce)
		return nil, false
	}
	return body, true
}

// prepare builds the upstream request with its context and timers, and
// makes the attempt the one a hang-up cancels.
func (a *attempt) prepare(body []byte) {
	e, r, ch, ki, up := a.e, a.r, a.route.Channel, a.keyIndex, a.family
	u := &ch.URLs[a.urlIndex]
	reqCtx, cancel := context.WithCancelCause(context.Background())
	tm := r.snap.Routing.Timeouts
	now := e.clock.Now()
	firstByte, firstByteCause := r.firstByteWait(now)
	total := tm.NonStream.D()
	if r.stream {
		total = tm.Stream.D()
	}
	a.cancel = cancel
	a.timers = attemptTimers{e: e, cancel: cancel, start: now, firstByte: firstByte, total: total, firstByteCause: firstByteCause}
	a.rq = upstreamRequest{Request: upstream.Request{
		Ctx: reqCtx, Proxy: ch.Proxy, Body: body,
		URL:      r.upstreamURL(up, *u, a.route.Upstream),
		Header:   func(h headerSetter) { r.setUpstreamHeaders(h, up, ch, ki) },
		HeaderBy: e.headerDeadline(firstByte, total),
		Watch:    e.injectedTimers(),
		Timers:   &a.timers, Lent: &r.bodyLent, HeaderWait: &a.headerWait,
	}}
	r.calling(a)
	if r.debug && r.debugOn(ch) {
		x := r.captureRequest(r.attempts, &a.rq)
		a.rq.onResponse = func(resp *upstreamResponse) { x.captureResponse(resp, r.debugMax()) }
	}
}

// unanswered ends an attempt that got no usable answer: a client fault
// goes back to the client at once, anything else is a failure to retry.
func (a *attempt) unanswered(ctx *fasthttp.RequestCtx, s *sent) (attemptResult, bool) {
	e, r := a.e, a.r
	miss := r.probe != nil && r.probeMissed(a.family, s, a.rq.URL, a.route.Upstream)
	a.at.end(e.clock.Now(), s.status, s.outcome)
	if s.outcome.ClientFault {
		if a.retryWithoutSignatures(s) {
			return attemptResult{}, true
		}
		e.relayError(ctx, r, a.relay, s.status, s.body)
		return attemptResult{done: true}, false
	}
	return attemptResult{outcome: s.outcome, status: s.status, body: s.body, family: a.family, miss: miss}, false
}

// retryWithoutSignatures reports whether an attempt the upstream refused
// with a 400 naming a reasoning signature is to be made once more, on the
// same route, with every signature left out (attemptAs makes it): a
// refusal of a signature is not the client's fault (relay.go, "Reasoning
// signatures across upstreams"). It is false when the refusal is not that,
// or the request was already sent without signatures: the error then goes
// to the client as before.
func (a *attempt) retryWithoutSignatures(s *sent) bool {
	r := a.r
	if r.dropSignatures || s.status != fasthttp.StatusBadRequest || r.ep.pass != nil ||
		!signature.Refused(s.body) || !signature.Carries(r.ep.family, r.body) {
		return false
	}
	r.dropSignatures = true
	o := s.outcome
	o.Message += " (a reasoning signature refused: retried without signatures)"
	a.at.end(a.e.clock.Now(), s.status, o)
	return true
}

// answer turns a 2xx answer into the client's: a stream peeked at and
// committed (stream.go), bytes streamed through unparsed (passthrough.go:
// only a relayed endpoint's relay has raw answers), or a whole answer
// (relay.go).
func (a *attempt) answer(ctx *fasthttp.RequestCtx) attemptResult {
	ct := a.resp.Header.Get("Content-Type")
	switch {
	case a.r.stream && isEventStream(ct):
		return a.e.startStream(ctx, a.r, a)
	case a.relay.raw(ct):
		return a.e.streamThrough(ctx, a.r, a)
	default:
		return a.e.finishWhole(ctx, a.r, a)
	}
}
