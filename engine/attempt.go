package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tidwall/sjson"
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

var (
	errFirstByteTimeout = errors.New("no first byte within routing.timeouts.first_byte")
	errTotalTimeout     = errors.New("response not complete within the configured timeout")
	errClientGone       = errors.New("client disconnected")
)

// errorPeekBytes bounds what is read of an upstream error body.
const errorPeekBytes = 64 << 10

// maxUpstreamBody bounds a non-stream upstream answer held in memory.
const maxUpstreamBody = 64 << 20

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

// tryRoute runs the attempts of one route: its keys and URLs in order
// until one answers, the failure names a wider scope, or max_attempts is
// spent. It reports whether the client has its answer, and otherwise the
// last failure (nil when nothing was sent).
func (e *Engine) tryRoute(ctx *fasthttp.RequestCtx, r *request, c candidate, p *routePlan) (last *attemptResult, done bool) {
	ch := c.route.Channel
	slot := e.reg.channelLoad.get(ch.Name)
	if reason := slot.admit(e.clock.Now(), ch.RPMLimit, ch.MaxConcurrency); reason != "" {
		p.note(ch.Name + " is at its " + reason)
		return nil, false
	}
	// The slot is held until the response ends (finish releases r.chSlot)
	// when this route answers, and given back here otherwise.
	r.chSlot = slot
	defer func() {
		if !done {
			slot.release()
			r.chSlot = nil
		}
	}()
	keys, urls := e.attemptOrder(r, c)
	if len(keys) == 0 {
		e.noAccountLeft(c.route.Channel, p)
	}
	retried := false // an account's expired token renewed once (accounts.go)
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
		retry, handled := e.accountAnswer(r, c.route, keys[ki], res, &retried)
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
	return keys, r.passURLs(ch, urls)
}

// failed counts a failed attempt against the channel's health and cools
// what it names.
func (e *Engine) failed(r *request, rt config.Route, ki, ui int, o failure.Outcome) {
	e.reg.health.get(rt.Channel.Name).add(e.clock.Now(), true)
	if o.RetryAfter > 0 && (r.retryAfter == 0 || o.RetryAfter < r.retryAfter) {
		r.retryAfter = o.RetryAfter
	}
	e.strike(r, rt, ki, ui, o)
}

// strike cools the narrowest scope the failure names, then promotes it to
// the whole channel when every enabled model (for a model failure) or every
// key (for a key failure) of the channel is cooling (design §6).
func (e *Engine) strike(r *request, rt config.Route, ki, ui int, o failure.Outcome) {
	e.strikeScope(r.snap, rt, ki, ui, o)
}

func (e *Engine) strikeScope(snap *config.Snapshot, rt config.Route, ki, ui int, o failure.Outcome) {
	ch := rt.Channel
	pol := cooldownPolicy(snap.Routing.Cooldown)
	o.Message = e.redactor(snap).Message(o.Message) // the reason is stored and shown
	var siblings []cooldownKey
	switch o.Scope {
	case failure.ScopeKey:
		e.reg.cooldowns.Strike(e.keyScope(ch, ki), o, pol)
		for i := range ch.Keys {
			siblings = append(siblings, e.keyScope(ch, i))
		}
	case failure.ScopeURL:
		e.reg.cooldowns.Strike(e.urlScope(ch, ui), o, pol)
	case failure.ScopeModel:
		e.reg.cooldowns.Strike(modelScope(ch, rt.Upstream), o, pol)
		for _, m := range ch.Models {
			if !m.Disabled {
				siblings = append(siblings, modelScope(ch, m.Upstream))
			}
		}
	case failure.ScopeChannel:
		e.reg.cooldowns.Strike(channelScope(ch), o, pol)
	}
	if len(siblings) == 0 {
		return
	}
	if until, all := e.reg.cooldowns.AllCooling(siblings); all {
		promoted := o
		promoted.Scope = failure.ScopeChannel
		promoted.RetryAfter = max(until.Sub(e.clock.Now()), time.Second)
		promoted.Message = fmt.Sprintf("every %s of the channel is cooling", o.Scope)
		e.reg.cooldowns.Strike(channelScope(ch), promoted, pol)
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

// try sends the request to one channel, key and URL. It returns done
// once the client has an answer; otherwise the classified failure.
// The result is on the heap: tryRoute keeps the last failure.
func (e *Engine) try(ctx *fasthttp.RequestCtx, r *request, rt config.Route, ki, ui int) *attemptResult {
	u := &rt.Channel.URLs[ui]
	res := new(attemptResult)
	if r.detects(u) {
		*res = e.detectAttempt(ctx, r, rt, ki, ui)
	} else {
		*res = e.attemptAs(ctx, r, rt, ki, ui, upstreamFamily(u, r.ep.family))
	}
	return res
}

// attemptAs is try speaking family up to the URL: one attempt, or two
// when the upstream refused a reasoning signature (signature_retry.go).
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
	if failed := e.accountFor(r, a); failed != nil {
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
	r.probeFound(a.family)
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
	if err == nil && up == protocol.Responses {
		var dialect []string
		body, dialect, err = codexDialect(rt.Channel, body)
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
	if r.debugOn(ch) {
		x := r.captureRequest(r.attempts, &a.rq)
		a.rq.onResponse = func(resp *upstreamResponse) { x.captureResponse(resp, r.debugMax()) }
	}
}

// unanswered ends an attempt that got no usable answer: a client fault
// goes back to the client at once, anything else is a failure to retry.
func (a *attempt) unanswered(ctx *fasthttp.RequestCtx, s *sent) (attemptResult, bool) {
	e, r := a.e, a.r
	miss := r.probeMissed(a.family, s, a.rq.URL, a.route.Upstream)
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

// answer turns a 2xx answer into the client's: a stream peeked at and
// committed (stream.go), bytes streamed through unparsed (passthrough.go),
// or a whole answer (relay.go).
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

// succeeded clears the scopes this attempt proved healthy and records the
// winning route on the log row.
func (e *Engine) succeeded(r *request, c *attempt, now time.Time) {
	ch := c.route.Channel
	ttfb := now.Sub(c.started)
	e.reg.health.get(ch.Name).add(now, false)
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

// setUpstreamHeaders forwards the client's headers for native traffic (so
// anthropic-beta and friends keep working), never its credential, and sets
// the channel key in the header the upstream family reads.
func (r *request) setUpstreamHeaders(h headerSetter, up protocol.Family, ch *config.Channel, ki int) {
	hasVersion := false
	if up == r.ep.family {
		for _, kv := range r.header {
			h.Add(kv[0], kv[1])
			hasVersion = hasVersion || strings.EqualFold(kv[0], "anthropic-version")
		}
	} else {
		for _, kv := range r.header {
			if strings.EqualFold(kv[0], "User-Agent") {
				h.Set("User-Agent", kv[1])
			}
		}
	}
	h.Set("Content-Type", r.upstreamContentType())
	if r.stream {
		h.Set("Accept", "text/event-stream")
	}
	name, prefix := protocol.CredentialHeader(up)
	h.Set(name, prefix+ch.Keys[ki].Reveal())
	if up == protocol.Anthropic && !hasVersion {
		h.Set("anthropic-version", protocol.AnthropicVersion)
	}
	for _, rule := range ch.Rewrite.Headers {
		switch rule.Action {
		case "remove":
			h.Del(rule.Name)
		default:
			h.Set(rule.Name, rule.Value)
		}
	}
}

// rewriteBody applies a channel's body rules (after conversion).
func rewriteBody(rules []config.BodyRule, body []byte) ([]byte, error) {
	var err error
	for _, rule := range rules {
		switch rule.Action {
		case "remove":
			body, err = sjson.DeleteBytes(body, rule.Path)
		default:
			body, err = sjson.SetRawBytes(body, rule.Path, rule.Value)
		}
		if err != nil {
			return nil, fmt.Errorf("rewrite rule for %q: %w", rule.Path, err)
		}
	}
	return body, nil
}

// copyResponseHeaders gives the client the upstream's kept headers; a
// contentType other than "" replaces the upstream's Content-Type.
func copyResponseHeaders(ctx *fasthttp.RequestCtx, h interface{ Get(string) string }, contentType string) {
	if contentType != "" {
		ctx.SetContentType(contentType)
	}
	if hh, ok := h.(*upstream.Header); ok {
		// One walk of the upstream's few headers rather than a lookup per
		// kept name, each of which walks them for a name that is mostly
		// absent (perf). The first of repeated names wins, as
		// with Get.
		var seen [len(keepResponseHeaders)]bool
		seen[0] = contentType != "" // keepResponseHeaders[0] is Content-Type
		for _, kv := range hh.Fields() {
			for i, name := range keepResponseHeaders {
				if !seen[i] && kv[1] != "" && len(kv[0]) == len(name) && strings.EqualFold(kv[0], name) {
					seen[i] = true
					ctx.Response.Header.Set(name, kv[1])
				}
			}
		}
		return
	}
	for i, k := range keepResponseHeaders {
		if i == 0 && contentType != "" {
			continue
		}
		if v := h.Get(k); v != "" {
			ctx.Response.Header.Set(k, v)
		}
	}
}

func isEventStream(ct string) bool {
	return strings.HasPrefix(strings.ToLower(ct), "text/event-stream")
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &t) && t.Timeout()
}

// headerDeadline is when the first of the attempt's timers would fire

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
