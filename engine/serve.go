package engine

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/listen"
	"github.com/ccload/ccload/protocol"
)

// serveProxy is one client request, top to bottom: authenticate, admit
// (body size, model, token rules), find the routes that serve the model,
// run the attempt loop, record. Streams finish (and record) in the body
// stream writer after this function returns.
func (e *Engine) serveProxy(ctx *fasthttp.RequestCtx, ep endpoint) {
	var r *request
	defer e.recoverRequest(ctx, ep, &r)
	snap := e.cfg.Current()
	tok := e.authenticate(snap, clientToken(ctx))
	if tok == nil {
		// Design §5.7: no valid token, no log row (only a counter).
		e.unauthorized.Add(1)
		writeError(ctx, ep.family, &clientError{Status: 401, Msg: "missing or invalid ccload token"})
		return
	}
	if ep.op == opListModels {
		e.serveModels(ctx, ep, snap, tok)
		return
	}

	r = e.newRequest(ctx, ep, snap, tok)
	watchHangUp(ctx, r)
	e.serveRequest(ctx, r)
	if !r.relaying {
		r.dropBody()
	}
}

// watchHangUp makes r the request told when its client hangs up, until
// finish, when its connection is watched (listen.Listener).
func watchHangUp(ctx *fasthttp.RequestCtx, r *request) {
	if ctx.Conn() == nil {
		return
	}
	if c := listen.Find(ctx.LocalAddr(), ctx.RemoteAddr()); c != nil {
		r.conn = c
		c.Watch(r)
	}
}

// serveRequest runs an authenticated request through admission, limits,
// routing and the attempt loop, and finishes it once it is answered.
// Channel tests enter here too (chattest.go), so they take the path client
// requests take. A stream that went to the client finishes when its relay
// ends (relayBody).
func (e *Engine) serveRequest(ctx *fasthttp.RequestCtx, r *request) {
	e.handle(ctx, r)
	if !r.relaying {
		e.finish(r)
	}
}

// handle answers an admitted request, or hands its stream to a relay.
func (e *Engine) handle(ctx *fasthttp.RequestCtx, r *request) {
	ep := r.ep
	e.inflight.Add(1)
	if err := r.admit(ctx); err != nil {
		e.reject(ctx, r, err)
		return
	}
	if err := e.admitToken(r); err != nil {
		e.reject(ctx, r, err)
		return
	}
	if err := e.reg.ledger.ReserveToken(r.token); err != nil {
		e.reject(ctx, r, &clientError{Status: 429, Msg: err.Error()})
		return
	}
	r.costReserved = true
	if ep.op == opCountTokens {
		e.serveCountTokens(ctx, r)
		return
	}
	routes := e.allowedRoutes(r)
	if len(routes) == 0 {
		e.reject(ctx, r, &clientError{Status: 404, Msg: fmt.Sprintf("no channel serves model %q for this token", r.model)})
		return
	}
	if ep.op == opWarmUp {
		// Admitted like the turn it prepares; it generates nothing, so
		// it costs nothing and goes to no upstream.
		ctx.SetStatusCode(200)
		r.rec.fail(200, "", false)
		return
	}
	routes, ce := e.pricedRoutes(r, routes)
	if ce == nil && r.ep.pass != nil {
		routes, ce = passRoutes(r, routes)
	}
	if ce != nil {
		e.reject(ctx, r, ce)
		return
	}
	e.begin(r)
	e.attemptLoop(ctx, r, routes)
}

// begin makes the request visible as active and announces it.
func (e *Engine) begin(r *request) {
	e.active.mu.Lock()
	e.active.reqs[r.id] = r
	e.active.mu.Unlock()
	if e.bus.Active() {
		e.bus.publish(r.event("start", r.start))
	}
}

// admit checks everything that needs no upstream: body size, the model and
// stream flag (read with gjson, nothing else is parsed), token expiry and
// model globs. An admitted request then has its session named (affinity)
// from the same walk of the body.
func (r *request) admit(ctx *fasthttp.RequestCtx) *clientError {
	// A WebSocket turn's frame was held to the limit already (1009); its
	// body also carries the replayed transcript, bounded by
	// server.websockets.max_transcript_bytes instead.
	if limit := int(r.snap.Server.MaxBodyBytes); limit > 0 && len(r.body) > limit && !r.socket {
		return &clientError{Status: 413, Msg: fmt.Sprintf("request body is %d bytes, over the server.max_body_bytes limit of %d", len(r.body), limit)}
	}
	in := &members{}
	if r.ep.pass != nil && r.ep.pass.Form {
		if ce := r.admitForm(); ce != nil {
			return ce
		}
	} else {
		in = readMembers(r.body)
		if ce := checkInput(r.body, in); ce != nil {
			return ce
		}
		r.bodyChecked = true
	}
	switch {
	case r.model != "": // a form's model, read by admitForm
	case r.ep.model != "": // Gemini: model and stream come from the path
		r.model, r.stream = r.ep.model, r.ep.stream
	default:
		m := in.get("model")
		if m.Type != gjson.String || m.Str == "" {
			return &clientError{Status: 400, Msg: `request body has no "model" string`}
		}
		r.model = strings.Clone(m.Str) // in points into a copy of the body kept no longer
		r.stream = in.get("stream").Bool()
		if r.ep.pass != nil && !r.ep.pass.Stream {
			// images may stream partial images; that SSE is streamed
			// through unparsed (finishPass), not peeked at like chat.
			r.unbooked = r.stream
			r.stream = false
		}
		if r.ep.family == protocol.OpenAI && r.stream {
			r.chatUsage = in.get("stream_options").Get("include_usage").Bool()
		}
	}
	if r.ep.pass != nil && r.ep.pass.Binary {
		r.unbooked = true // audio bytes: no usage in them
	}
	if strings.IndexFunc(r.model, isControl) >= 0 {
		return &clientError{Status: 400, Msg: "the model name holds control characters"}
	}
	r.rec.admitted(r.model, r.stream)
	t := r.token
	if !t.Expires.IsZero() && !r.start.Before(t.Expires) {
		return &clientError{Status: 403, Msg: fmt.Sprintf("token %q expired at %s", t.Name, t.Expires.Format("2006-01-02"))}
	}
	if !t.AllowsModel(r.model) {
		return &clientError{Status: 403, Msg: fmt.Sprintf("token %q may not use model %q (allowed: %s)", t.Name, r.model, strings.Join(t.Models, ", "))}
	}
	identifySession(ctx, r, in)
	return nil
}

// admitToken takes one of the token's slots (max_concurrency, rpm_limit),
// or says which limit refused.
func (e *Engine) admitToken(r *request) *clientError {
	t := r.token
	l := e.reg.tokenLoad.get(t.Name)
	switch l.Admit(r.start, t.RPMLimit, t.MaxConcurrency) {
	case "":
		r.tokSlot = l
		return nil
	case "rpm_limit":
		return &clientError{Status: 429, Msg: fmt.Sprintf("token %q is over its rpm_limit of %d requests per minute", t.Name, t.RPMLimit)}
	default:
		return &clientError{Status: 429, Msg: fmt.Sprintf("token %q already has max_concurrency=%d requests in flight", t.Name, t.MaxConcurrency)}
	}
}

// allowedRoutes lists the routes serving the request's model on channels
// the token may use.
func (e *Engine) allowedRoutes(r *request) []config.Route {
	all := r.snap.Routes(r.model)
	out := make([]config.Route, 0, len(all))
	for _, rt := range all {
		if r.token.AllowsChannel(rt.Channel.Name) {
			out = append(out, rt)
		}
	}
	return out
}

// reject answers a request that never reached an upstream and records
// the reason for its log row (design §5.7: rejected requests get a row too).
func (e *Engine) reject(ctx *fasthttp.RequestCtx, r *request, ce *clientError) {
	ce = &clientError{Status: ce.Status, Msg: r.rec.red.Client(ce.Msg), RetryAfter: ce.RetryAfter}
	writeError(ctx, r.ep.family, ce)
	r.rec.fail(ce.Status, ce.Msg, false)
}
