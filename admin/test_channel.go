package admin

import (
	"context"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
)

// maxTestTime bounds one test; the dashboard waits for the answer.
const maxTestTime = 30 * time.Second

// prober is implemented by *engine.Engine.
type prober interface {
	RunProbe(ctx context.Context, snap *config.Snapshot, p engine.Probe) engine.ProbeResult
}

// testChannel sends one small real request through the channel, with the
// same connection settings, rewrite rules and classifier as live traffic
// (engine.RunProbe), and returns what it saw. It does not touch cooldowns:
// a test is a look, not a repair.
func (s *Server) testChannel(ctx *fasthttp.RequestCtx, name string) error {
	var req adminapi.TestRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	p, ok := s.eng.(prober)
	if !ok {
		return &httpError{Status: fasthttp.StatusNotImplemented, Msg: "this engine cannot run channel tests"}
	}
	snap := s.cfg.Current()
	ch := snap.Channel(name)
	if ch == nil {
		return errNotFound("no channel named " + quote(name))
	}
	model, ok := testModel(ch, req.Model)
	if !ok {
		return errBadRequest("channel " + quote(name) + " has no model " + quote(req.Model))
	}
	if req.URL < 0 || req.URL >= len(ch.URLs) {
		return errBadRequest("url: want an index below the channel's " + strconv.Itoa(len(ch.URLs)) + " URLs")
	}
	if req.Key < 0 || req.Key >= len(ch.Keys) {
		return errBadRequest("key: want an index below the channel's " + strconv.Itoa(len(ch.Keys)) + " keys")
	}
	tctx, cancel := context.WithTimeout(detach(ctx), min(max(snap.Routing.Timeouts.NonStream.D(), time.Second), maxTestTime))
	defer cancel()
	res := p.RunProbe(tctx, snap, engine.Probe{Channel: ch, Model: model, URL: req.URL, Key: req.Key, Stream: req.Stream})
	v := probeView(res)
	v.URL = maskURL(res.URL)
	v.Key = engine.KeyID(ch.Keys[req.Key])
	s.log.Info("admin: channel test", "channel", name, "model", model.Name, "ok", res.OK, "status", res.Status, "ms", res.TotalMs)
	return writeJSON(ctx, fasthttp.StatusOK, v)
}

// testModel picks the model to test: the one asked for (by client or
// upstream name), else the check model, else the first enabled one.
func testModel(ch *config.Channel, want string) (config.Model, bool) {
	if want == "" && ch.Check != nil {
		want = ch.Check.Model
	}
	for _, m := range ch.Models {
		if want == "" && !m.Disabled || want != "" && (m.Name == want || m.Upstream == want) {
			return m, true
		}
	}
	return config.Model{}, false
}

// probeView is the wire form of a probe result (the answer to a channel
// test and a channel's last_check), before URL masking.
func probeView(r engine.ProbeResult) adminapi.ProbeResult {
	return adminapi.ProbeResult{
		Channel: r.Channel, Model: r.Model, Upstream: r.Upstream, URL: r.URL, Key: r.Key,
		Protocol: string(r.Protocol), Stream: r.Stream, OK: r.OK, Status: r.Status,
		TTFBMs: r.TTFBMs, TotalMs: r.TotalMs,
		Kind: string(r.Kind), Scope: string(r.Scope), Message: r.Message,
	}
}
