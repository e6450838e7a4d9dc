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
// rule (candidates.go) until one answers or routing.max_attempts is spent,
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
// now. It and unserved are out of line so that attemptLoop's frame, which
// every request's stack holds while the upstream answers, stays small
// (see dialAside).
//
//go:noinline
func (e *Engine) planRoutes(r *request, routes []config.Route, now time.Time) *routePlan {
	hs := r.snap.Routing.HealthScore
	ordered := e.orderRoutes(routes, func(ch *config.Channel) float64 { return e.effectivePriority(ch, hs, now) })
	p := e.plan(r, ordered, now)
	e.preferPinned(r, &p, now)
	return &p
}

// unserved answers a request no attempt answered.
//
//go:noinline
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
		res := e.attempt(ctx, r, c.route, keys[ki], urls[ui])
		if res.done {
			return nil, true
		}
		if r.gone.Load() {
			// The client's leaving (hangups) ended the attempt, which
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
//
//go:noinline
func (e *Engine) abandoned(ctx *fasthttp.RequestCtx, r *request) bool {
	e.reject(ctx, r, &clientError{Status: 499, Msg: errClientGone.Error() + " while waiting for the upstream"})
	return true
}

// attemptOrder is the order in which a route's keys and URLs are tried.
// It and failed are out of line so that tryRoute's frame, which every
// request's stack holds while the upstream answers, stays small (see
// dialAside).
//
//go:noinline
func (e *Engine) attemptOrder(r *request, c candidate) (keys, urls []int) {
	ch := c.route.Channel
	keys, urls = e.keyOrder(ch, c.anyway), e.urlOrder(ch, c.anyway)
	keys = pinnedFirst(r, ch, keys, func(i int) string { return e.reg.keyID(ch.Keys[i]) }, r.pin.Key)
	urls = pinnedFirst(r, ch, urls, func(i int) string { return e.reg.urlID(ch.URLs[i].URL) }, r.pin.URL)
	return keys, r.passURLs(ch, urls)
}

// failed counts a failed attempt against the channel's health and cools
// what it names.
//
//go:noinline
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

// attempt sends the request to one channel, key and URL. It returns done
// once the client has an answer; otherwise the classified failure.
// The result is on the heap: tryRoute keeps the last failure, and a
// pointer keeps the result out of the frames of the attempt path.
func (e *Engine) attempt(ctx *fasthttp.RequestCtx, r *request, rt config.Route, ki, ui int) *attemptResult {
	u := &rt.Channel.URLs[ui]
	res := new(attemptResult)
	if r.detects(u) {
		*res = e.detectAttempt(ctx, r, rt, ki, ui)
	} else {
		*res = e.attemptAs(ctx, r, rt, ki, ui, upstreamFamily(u, r.ep.family))
	}
	return res
}

// attemptAs is attempt speaking family up to the URL.
func (e *Engine) attemptAs(ctx *fasthttp.RequestCtx, r *request, rt config.Route, ki, ui int, up protocol.Family) attemptResult {
	ch := rt.Channel
	r.attempts++
	at := r.rec.begin(ch.Name, e.reg.keyID(ch.Keys[ki]), e.reg.urlID(ch.URLs[ui].URL), up, rt.Upstream, e.clock.Now())
	body, ok := e.bodyFor(ctx, r, rt, up, at)
	if !ok {
		return attemptResult{done: true}
	}
	c := e.newCall(r, rt, ki, ui, up, body, at)
	if failed := e.accountFor(r, c); failed != nil {
		return *failed
	}
	var s sent
	if r.socket && ch.WebSockets && up == protocol.Responses && ch.Proxy == "" {
		c.timers.Arm()
		slot := ch.Name + "\x00" + e.reg.keyID(ch.Keys[ki]) + "\x00" + c.rq.URL
		s = e.sendSocket(&c.rq, r.ups, slot, func(n string) { at.note([]string{n}) })
	} else {
		s = e.send(&c.rq)
	}
	if s.resp == nil {
		return e.unanswered(ctx, r, c, &s)
	}
	// The request is sent; what the answer needs of it is in c and r, and
	// a stream should not keep the (maybe converted) body alive.
	c.rq = upstreamRequest{}
	c.resp = s.resp
	r.probeFound(up)
	if r.ep.pass != nil && !(r.stream && isEventStream(c.resp.Header.Get("Content-Type"))) {
		return e.finishPass(ctx, r, c)
	}
	if !r.stream || !isEventStream(c.resp.Header.Get("Content-Type")) {
		return e.finishJSON(ctx, r, c)
	}
	return e.startStream(ctx, r, c)
}

// The helpers of attemptAs below are out of line so that its frame, which
// every request's stack holds while the upstream answers, stays small: a
// request's deepest point must fit the 8 KiB stack a stream then keeps
// (see dialAside).

// bodyFor is the body sent up, or false when the request cannot be
// expressed for this upstream; the client then has its 400: the client's
// fault (design §7), never a silent drop.
//
//go:noinline
func (e *Engine) bodyFor(ctx *fasthttp.RequestCtx, r *request, rt config.Route, up protocol.Family, at *attemptLog) ([]byte, bool) {
	body, notes, err := r.upstreamBody(up, rt.Upstream, convert.RequestOptions{
		HostedSearch: rt.Channel.WebSearch, Checked: r.bodyChecked,
		Origin: signature.NewOrigin(up, rt.Channel.Name), DropSignatures: r.dropSignatures,
	})
	if r.socket {
		notes = append(notes, "transport: websocket")
	}
	at.note(notes)
	if err == nil {
		body, err = rewriteBody(rt.Channel.Rewrite.Body, body)
	}
	if err == nil && up == protocol.Responses {
		var dialect []string
		body, dialect, err = codexDialect(rt.Channel, body)
		at.note(dialect)
	}
	if err != nil {
		ce := &clientError{Status: 400, Msg: err.Error()}
		at.end(e.clock.Now(), 400, failure.Outcome{Kind: failure.KindClient, ClientFault: true, Message: ce.Msg})
		e.reject(ctx, r, ce)
		return nil, false
	}
	return body, true
}

// newCall prepares one attempt's upstream request and arms its timers.
//
//go:noinline
func (e *Engine) newCall(r *request, rt config.Route, ki, ui int, up protocol.Family, body []byte, at *attemptLog) *upstreamCall {
	ch := rt.Channel
	u := &ch.URLs[ui]
	reqCtx, cancel := context.WithCancelCause(context.Background())
	tm := r.snap.Routing.Timeouts
	now := e.clock.Now()
	firstByte, firstByteCause := r.firstByteWait(now)
	total := tm.NonStream.D()
	if r.stream {
		total = tm.Stream.D()
	}
	c := &upstreamCall{
		route: rt, keyIndex: ki, urlIndex: ui, family: up, at: at,
		cancel: cancel, started: at.start,
		timers: attemptTimers{e: e, cancel: cancel, start: now, firstByte: firstByte, total: total, firstByteCause: firstByteCause},
		rq: upstreamRequest{Request: upstream.Request{
			Ctx: reqCtx, Proxy: ch.Proxy, Body: body,
			URL:      r.upstreamURL(up, *u, rt.Upstream),
			Header:   func(h headerSetter) { r.setUpstreamHeaders(h, up, ch, ki) },
			HeaderBy: e.headerDeadline(firstByte, total),
			Watch:    e.injectedTimers(),
		}},
	}
	c.rq.Timers = &c.timers
	c.rq.Lent = &r.bodyLent
	c.rq.HeaderWait = &c.headerWait
	r.calling(c)
	if r.debugOn(ch) {
		x := r.captureRequest(r.attempts, &c.rq)
		c.rq.onResponse = func(resp *upstreamResponse) { x.captureResponse(resp, r.debugMax()) }
	}
	return c
}

// unanswered ends an attempt that got no usable answer: a client fault
// goes back to the client at once, anything else is a failure to retry.
//
//go:noinline
func (e *Engine) unanswered(ctx *fasthttp.RequestCtx, r *request, c *upstreamCall, s *sent) attemptResult {
	c.timers.stop()
	c.cancel(nil)
	miss := r.probeMissed(c.family, s, c.rq.URL, c.route.Upstream)
	c.at.end(e.clock.Now(), s.status, s.outcome)
	if s.outcome.ClientFault {
		if res, ok := e.retryWithoutSignatures(ctx, r, c, s); ok {
			return res
		}
		e.relayError(ctx, r, c.family, s.status, s.body)
		return attemptResult{done: true}
	}
	return attemptResult{outcome: s.outcome, status: s.status, body: s.body, family: c.family, miss: miss}
}

// upstreamCall is one upstream response being turned into the client's
// answer.
type upstreamCall struct {
	route    config.Route
	keyIndex int
	urlIndex int
	family   protocol.Family
	at       *attemptLog
	resp     *upstreamResponse
	cancel   context.CancelCauseFunc
	timers   attemptTimers
	started  time.Time
	// rq is the request sent up, cleared once an answer arrived.
	rq upstreamRequest
	// headerWait is the HTTP/1.1 connection waiting for this attempt's
	// answer headers, which a hang-up closes (request.leave).
	headerWait upstream.HeaderWait
}

// finishJSON reads a whole non-stream answer, checks it is not an error in
// disguise (HTTP 200 with an error body, design §6), converts it for the
// client and writes it.
func (e *Engine) finishJSON(ctx *fasthttp.RequestCtx, r *request, c *upstreamCall) attemptResult {
	b, now, failed := e.readWhole(r, c)
	if failed != nil {
		return *failed
	}
	out := b
	if c.family != r.ep.family {
		var failed *attemptResult
		if out, failed = convertAnswer(r, c, b, now); failed != nil {
			return *failed
		}
	}
	return e.answerWhole(ctx, r, c, now, out, convert.UsageOf(c.family, b), "application/json")
}

// convertAnswer converts a whole answer for the client, or fails the
// attempt. Out of line: see the helpers of attemptAs.
//
//go:noinline
func convertAnswer(r *request, c *upstreamCall, b []byte, now time.Time) ([]byte, *attemptResult) {
	out, err := convert.ResponseWith(c.family, r.ep.family, b, r.model, convert.ResponseOptions{Request: r.body, Origin: originOf(c)})
	if err != nil {
		o := failure.Outcome{Kind: failure.KindServer, Scope: failure.ScopeModel, Retry: true, Message: "upstream answer could not be converted: " + err.Error()}
		c.at.end(now, c.resp.StatusCode, o)
		return nil, &attemptResult{outcome: o, status: 502}
	}
	return out, nil
}

// succeeded clears the scopes this attempt proved healthy and records the
// winning route on the log row.
func (e *Engine) succeeded(r *request, c *upstreamCall, now time.Time) {
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
		e.bus.publish(r.event("first_byte", now))
	}
}

// relayError hands an upstream client-fault error (400, 413, 422) to the
// client at once, in the client's shape.
func (e *Engine) relayError(ctx *fasthttp.RequestCtx, r *request, up protocol.Family, status int, body []byte) {
	body = r.rec.red.Body(body)
	out := body
	if up != r.ep.family {
		out = convert.ConvertError(up, r.ep.family, status, body)
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(out)
	r.rec.fail(status, string(body), false)
	e.finish(r)
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

// upstreamBody is the body sent to a family: the client's own bytes with
// only the model renamed for native traffic (design §7: native traffic is
// never converted), a conversion otherwise.
// The notes say what a conversion dropped or approximated (convert.RequestWith).
func (r *request) upstreamBody(up protocol.Family, model string, opt convert.RequestOptions) ([]byte, []string, error) {
	if up != r.ep.family {
		return convert.RequestWith(r.ep.family, up, r.body, model, r.stream, opt)
	}
	body, err := r.nativeBody(up, model)
	if err == nil && r.ep.pass == nil {
		body, err = nativeSignatures(up, body, model, opt)
	}
	return body, nil, err
}

// nativeBody is the client's own body for its own family.
func (r *request) nativeBody(up protocol.Family, model string) ([]byte, error) {
	body := r.body
	if up == protocol.OpenAI && r.stream && !r.wantsChatUsage() {
		// Chat streams report usage only when asked; ask, and relay hides
		// the extra usage chunk from this client, which did not (CLIENTS.md).
		var err error
		if body, err = sjson.SetBytes(body, "stream_options.include_usage", true); err != nil {
			return nil, err
		}
	}
	if r.ep.pass != nil {
		return r.passBody(body, model)
	}
	if up == protocol.Gemini || model == r.model {
		return body, nil // Gemini's model is in the path
	}
	return sjson.SetBytes(body, "model", model)
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
