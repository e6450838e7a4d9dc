package engine

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/listen"
	"github.com/ccload/ccload/engine/live"
	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/jsonwalk"
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

// recoverRequest is deferred by serveProxy: a panic anywhere in one
// request's handling (a converter, the relay, a classifier) must cost that
// request only. It is answered with a 500 in its protocol's shape, logged
// with its stack, and gets its log row; the server keeps serving. *rp is
// the request once it exists (nil while authenticating: no row for an
// unauthenticated caller).
func (e *Engine) recoverRequest(ctx *fasthttp.RequestCtx, ep endpoint, rp **request) {
	v := recover()
	if v == nil {
		return
	}
	e.log.Error("panic while serving a request; answered 500", "path", string(ctx.Path()), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	r := *rp
	if r != nil && r.finished.Load() {
		return // the answer and the row were already given; nothing to repair
	}
	ce := &clientError{Status: fasthttp.StatusInternalServerError, Msg: "internal error in ccload while serving this request"}
	ctx.Response.Reset()
	writeError(ctx, ep.family, ce)
	if r != nil {
		r.rec.fail(ce.Status, fmt.Sprintf("panic: %v", v), false)
		e.finish(r)
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
		e.bus.Publish(r.event("start", r.start))
	}
}

// active tracks requests in flight for /admin/active and the events.
type active struct {
	mu   sync.Mutex
	reqs map[uint64]*request
	next atomic.Uint64
}

func newActive() *active { return &active{reqs: map[uint64]*request{}} }

// Active lists the requests in flight now, as "progress" events.
func (e *Engine) Active() []live.Event {
	now := e.clock.Now()
	e.active.mu.Lock()
	defer e.active.mu.Unlock()
	out := make([]live.Event, 0, len(e.active.reqs))
	for _, r := range e.active.reqs {
		out = append(out, r.event("progress", now))
	}
	return out
}

// Events is the engine's event bus.
func (e *Engine) Events() *live.Bus { return e.bus }

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

// members are the top-level members of a client body that admission and
// session affinity read, found in one walk of the body (perf).
// An agent's request runs to hundreds of kilobytes; a gjson.GetBytes per
// field walked it once per field and copied every member it found. The
// walk is jsonwalk's, over the body itself: the results point into the
// request's body, so nothing taken from members may be kept past the
// request's admission without strings.Clone.
type members struct {
	valid  bool // the body is JSON (RFC 8259; UTF-8 is checkInput's)
	object bool // the body is a JSON object
	// dup is a key the body has twice in one object ("" when none).
	dup string
	// raw holds each member's JSON text ("" when absent): a third of the
	// size of a gjson.Result each, and gjson.Parse of it costs no walk.
	raw [len(memberNames)]string
}

// memberNames are the members read: admission's own, then affinity's
// (engine/affinity: Identify and its fingerprint).
var memberNames = [...]string{
	"model", "stream", "stream_options",
	"prompt_cache_key", "metadata", "user",
	"system", "messages", "instructions", "input",
	"systemInstruction", "system_instruction", "contents",
}

// readMembers walks body once, checking that it is JSON as it goes. A body
// that is not a JSON object has no members. (For an 85 KB Claude Code
// request, gjson's check, its walk and the copy of the body the walk
// needed took about 280 µs; this one pass takes about 40.)
func readMembers(body []byte) *members {
	m := &members{}
	doc := jsonwalk.View(body)
	m.valid, m.dup = jsonwalk.ValidUnique(doc, func(k, v string) {
		if strings.IndexByte(k, '\\') >= 0 {
			k = gjson.Parse(`"` + k + `"`).Str // an escaped name, as gjson.Get reads it
		}
		for i, name := range memberNames {
			// The first of duplicate keys wins, as with gjson.Get; a body
			// with any is refused (checkInput).
			if k == name && m.raw[i] == "" {
				m.raw[i] = v
				break
			}
		}
	})
	t := strings.TrimLeft(doc, " \t\r\n")
	m.object = t != "" && t[0] == '{'
	return m
}

// get returns the member called name; it must be one of memberNames.
func (m *members) get(name string) gjson.Result {
	for i, n := range memberNames {
		if n == name {
			return gjson.Parse(m.raw[i])
		}
	}
	panic("engine: member " + name + " is not read by readMembers")
}

// checkInput is the strict reading of a client body every family gets
// before anything else looks at it: valid UTF-8, one JSON
// object, and the fields the gateway itself reads typed as the protocols
// define them. A body that fails is the client's fault: answered 400 in its
// error shape, sent to no upstream, cooling nothing.
func checkInput(body []byte, m *members) *clientError {
	if !utf8.Valid(body) {
		return &clientError{Status: 400, Msg: "request body is not valid UTF-8"}
	}
	if !m.valid {
		return &clientError{Status: 400, Msg: "request body is not valid JSON"}
	}
	if !m.object {
		return &clientError{Status: 400, Msg: "request body is not a JSON object"}
	}
	if m.dup != "" {
		// ccload reads the first of two keys, many upstreams the last: a
		// second "model" would reach a model the token may not use, a
		// second "stream" would stream what is logged and billed as not.
		return &clientError{Status: 400, Msg: "request body has the key " + strconv.Quote(m.dup) + " twice in one object"}
	}
	if m := m.get("model"); m.Exists() {
		if m.Type != gjson.String || m.Str == "" {
			return &clientError{Status: 400, Msg: `"model" must be a non-empty string`}
		}
		if strings.IndexFunc(m.Str, isControl) >= 0 {
			return &clientError{Status: 400, Msg: `"model" holds control characters`}
		}
	}
	for _, f := range []struct {
		path string
		v    gjson.Result
	}{{"stream", m.get("stream")}, {"stream_options.include_usage", m.get("stream_options").Get("include_usage")}} {
		if f.v.Exists() && f.v.Type != gjson.True && f.v.Type != gjson.False {
			return &clientError{Status: 400, Msg: `"` + f.path + `" must be true or false`}
		}
	}
	return nil
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f || r >= 0x80 && r < 0xa0 }

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
