package admin

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"ccload/config"
	"ccload/engine"
)

// TestRequest is the body of POST /admin/channels/{name}/test. Every field
// is optional: Model defaults to the channel's check model, else its first
// enabled model; URL and Key are indexes into the channel's urls and keys
// (0 = the first).
type TestRequest struct {
	Model  string `json:"model,omitempty"`
	URL    int    `json:"url,omitempty"`
	Key    int    `json:"key,omitempty"`
	Stream bool   `json:"stream,omitempty"`
}

// TestResult answers a channel test: engine.ProbeResult with the URL
// masked and the key shown as its key id, as /admin/channels shows them.
type TestResult = engine.ProbeResult

// maxTestTime bounds one test; the dashboard waits for the answer.
const maxTestTime = 30 * time.Second

// prober is implemented by *engine.Engine.
type prober interface {
	RunProbe(ctx context.Context, snap *config.Snapshot, p engine.Probe) engine.ProbeResult
}

// testAction matches POST /admin/channels/{name}/test (rest is the raw path
// after /admin/channels/).
func testAction(rest string) (endpoint, bool) {
	raw, ok := strings.CutSuffix(rest, "/test")
	if !ok || raw == "" {
		return endpoint{}, false
	}
	name, err := url.PathUnescape(raw)
	if err != nil {
		return endpoint{}, false
	}
	return endpoint{method: "POST", h: func(s *Server, ctx *fasthttp.RequestCtx) error {
		return s.testChannel(ctx, name)
	}}, true
}

// testChannel sends one small real request through the channel, with the
// same connection settings, rewrite rules and classifier as live traffic
// (engine.RunProbe), and returns what it saw. It does not touch cooldowns:
// a test is a look, not a repair.
func (s *Server) testChannel(ctx *fasthttp.RequestCtx, name string) error {
	var req TestRequest
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
	res.URL = maskURL(res.URL)
	res.Key = engine.KeyID(ch.Keys[req.Key])
	s.log.Info("admin: channel test", "channel", name, "model", model.Name, "ok", res.OK, "status", res.Status, "ms", res.TotalMs)
	return writeJSON(ctx, fasthttp.StatusOK, res)
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
