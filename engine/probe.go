package engine

import (
	"context"
	"io"
	"time"

	"github.com/tidwall/sjson"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/engine/upstream"
	"github.com/ccload/ccload/protocol"
)

// Probe is one minimal real request to one channel × model × URL × key,
// as `ccload check` and scheduled checks send it.
type Probe struct {
	Channel *config.Channel
	Model   config.Model
	URL     int // index into Channel.URLs
	Key     int // index into Channel.Keys
	Stream  bool
}

// ProbeResult is what a probe saw. Key is a fingerprint only.
type ProbeResult struct {
	Channel  string          `json:"channel"`
	Model    string          `json:"model"`
	Upstream string          `json:"upstream_model"`
	URL      string          `json:"url"`
	Key      string          `json:"key"`
	Protocol protocol.Family `json:"protocol"`
	Stream   bool            `json:"stream"`
	OK       bool            `json:"ok"`
	Status   int             `json:"status"`
	TTFB     time.Duration   `json:"-"`
	Total    time.Duration   `json:"-"`
	TTFBMs   int64           `json:"ttfb_ms"`
	TotalMs  int64           `json:"total_ms"`
	Kind     failure.Kind    `json:"kind,omitempty"`
	Scope    failure.Scope   `json:"scope,omitempty"`
	Message  string          `json:"message,omitempty"`
}

// probeBody is the smallest request each family accepts.
func probeBody(f protocol.Family, model string, stream bool) []byte {
	var b []byte
	switch f {
	case protocol.Anthropic:
		b = []byte(`{"max_tokens":8,"messages":[{"role":"user","content":"ping"}]}`)
	case protocol.OpenAI:
		// max_completion_tokens: current OpenAI models refuse max_tokens.
		b = []byte(`{"max_completion_tokens":16,"messages":[{"role":"user","content":"ping"}]}`)
	case protocol.Responses:
		b = []byte(`{"max_output_tokens":16,"input":"ping"}`)
	case protocol.Gemini:
		return []byte(`{"contents":[{"role":"user","parts":[{"text":"ping"}]}],"generationConfig":{"maxOutputTokens":8}}`)
	}
	b, _ = sjson.SetBytes(b, "model", model)
	if stream {
		b, _ = sjson.SetBytes(b, "stream", true)
	}
	return b
}

// RunProbe sends one probe through the same connection settings as live
// traffic (proxy, rewrite rules, model rename) and classifies the outcome
// with the same classifier. It does not touch cooldowns; see Check.
func (e *Engine) RunProbe(ctx context.Context, snap *config.Snapshot, p Probe) ProbeResult {
	ch := p.Channel
	u := ch.URLs[p.URL]
	fam := protocol.Anthropic
	if len(u.Protocols) > 0 {
		fam = u.Protocols[0]
	} else if f := e.detectedFamily(ch.Name, u.URL); f != "" {
		fam = f // what live traffic found the URL speaks (detect.go)
	}
	res := ProbeResult{Channel: ch.Name, Model: p.Model.Name, Upstream: p.Model.Upstream, URL: config.MaskURL(u.URL),
		Key: ch.Keys[p.Key].String(), Protocol: fam, Stream: p.Stream}
	start := e.clock.Now()
	done := func(o failure.Outcome, status int) ProbeResult {
		res.Total = e.clock.Now().Sub(start)
		res.TotalMs, res.TTFBMs = res.Total.Milliseconds(), res.TTFB.Milliseconds()
		res.Status, res.OK = status, o.OK()
		res.Kind, res.Scope, res.Message = o.Kind, o.Scope, e.redactor(snap).Message(o.Message)
		if o.ClientFault {
			res.Message = "rejected as a bad request: " + res.Message
		}
		return res
	}
	body, err := rewriteBody(ch.Rewrite.Body, probeBody(fam, p.Model.Upstream, p.Stream))
	if err != nil {
		return done(failure.Outcome{Kind: failure.KindClient, ClientFault: true, Message: err.Error()}, 0)
	}
	probeReq := &request{ep: endpoint{family: fam}, stream: p.Stream}
	rq := upstreamRequest{Request: upstream.Request{
		Ctx: ctx, Proxy: ch.Proxy, Body: body,
		URL:    protocol.UpstreamURL(fam, u.URL, u.Exact, p.Model.Upstream, p.Stream),
		Header: func(h headerSetter) { probeReq.setUpstreamHeaders(h, fam, ch, p.Key) },
	}}
	rq.HeaderBy, _ = ctx.Deadline()
	s := e.send(&rq)
	if s.status != 0 {
		res.TTFB = e.clock.Now().Sub(start)
	}
	if s.resp == nil {
		return done(s.outcome, s.status)
	}
	resp := s.resp
	defer resp.Body.Close()
	if !p.Stream || !isEventStream(resp.Header.Get("Content-Type")) {
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamBody))
		if err != nil {
			return done(failure.Classify(failure.Input{Err: err, Timeout: ctx.Err() != nil, Now: e.clock.Now()}), resp.StatusCode)
		}
		if o, bad := failure.SoftError(b); bad {
			return done(o, resp.StatusCode)
		}
		return done(failure.Outcome{}, resp.StatusCode)
	}
	rd := protocol.NewReader(resp.Body, 0)
	for {
		ev, err := rd.Next()
		if err != nil && ctx.Err() != nil {
			// The probe's deadline (or its caller) ended the stream: a
			// timeout, not an upstream that closed early.
			return done(failure.Classify(failure.Input{Err: err, Timeout: ctx.Err() == context.DeadlineExceeded, Now: e.clock.Now()}), resp.StatusCode)
		}
		if err != nil {
			return done(failure.Outcome{Kind: failure.KindServer, Scope: failure.ScopeModel, Message: "stream ended before any content"}, resp.StatusCode)
		}
		if o, bad := streamError(fam, ev); bad {
			return done(o, resp.StatusCode)
		}
		if isContent(fam, ev) {
			res.TTFB = e.clock.Now().Sub(start)
			return done(failure.Outcome{}, resp.StatusCode)
		}
	}
}

// Check runs a probe and applies its outcome to the cooldowns exactly as
// live traffic would: a failure cools its scope, a success clears the key,
// URL and model it proved healthy.
func (e *Engine) Check(ctx context.Context, snap *config.Snapshot, p Probe) ProbeResult {
	res := e.RunProbe(ctx, snap, p)
	ch := p.Channel
	rt := config.Route{Channel: ch, Model: p.Model.Name, Upstream: p.Model.Upstream}
	if res.OK {
		e.reg.cooldowns.Success(e.keyScope(ch, p.Key))
		e.reg.cooldowns.Success(e.urlScope(ch, p.URL))
		e.reg.cooldowns.Success(modelScope(ch, p.Model.Upstream))
		e.reg.cooldowns.Success(channelScope(ch))
	} else {
		o := failure.Outcome{Kind: res.Kind, Scope: res.Scope, Message: "scheduled check: " + res.Message, Retry: true}
		e.strikeScope(snap, rt, p.Key, p.URL, o)
	}
	e.reg.lastChecks.store(ch.Name, res)
	return res
}

// LastCheck returns the latest scheduled check of a channel.
func (e *Engine) LastCheck(channel string) (ProbeResult, bool) {
	return e.reg.lastChecks.load(channel)
}
