// Package admin is ccload's admin surface: the JSON API under /admin/ that
// the dashboard, `ccload channels|tokens|logs|top` and scripts use, the
// /admin/events SSE stream, and the Prometheus /metrics endpoint. API.md
// documents every endpoint and field. The JSON bodies and the Go client are
// package adminapi, which imports no engine or store, so clients of the API
// (tui/ for `ccload top`, the CLI commands) build without the gateway.
//
// The Server is its own type, wired next to the engine in cmd/serve.go; it
// reads the engine's live state through the Engine interface and the
// durable state through store.Store, and never sits on the request path.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/live"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/store"
)

// Config is the config source: the serving snapshot and the reload status.
// *config.Source implements it; when the value also has
// OnSwap(func(old, new *config.Snapshot)) the reload history records every
// swap, and with Reload() error, POST /admin/config/reload works.
type Config interface {
	Current() *config.Snapshot
	Status() config.Status
}

// Engine is what the admin API reads from and does to the gateway.
// *engine.Engine implements it.
type Engine interface {
	Active() []live.Event
	Events() *live.Bus
	Cooldowns() *cooldown.Registry
	ChannelStates() []engine.ChannelState
	TokenLoad(name string) (inFlight int64, rpm int)
	SetPaused(channel string, paused bool)
	InFlight() int64
}

// LogStats reports the log writer's counters; *store.Writer implements it.
type LogStats interface {
	Stats() store.WriterStats
}

// Options wires a Server. Config, Engine and Store are required.
type Options struct {
	Config Config
	Engine Engine
	Store  store.Store
	Logs   LogStats // may be nil: storage counters then read 0
	// Metrics collects the request counters of /metrics. Wrap the engine's
	// log sink with Metrics.Sink so it sees every request. nil: New makes
	// one, whose request counters stay at zero.
	Metrics *Metrics
	Clock   clock.Clock  // nil = wall clock
	Logger  *slog.Logger // nil = slog.Default()
	// KeepAlive is the interval of the comment /admin/events sends so that
	// proxies keep the stream open and a gone client is noticed (15 s).
	KeepAlive time.Duration
	// WarmStats fills the /admin/stats cache for the dashboard's default
	// window (24 h in 5-minute buckets) in the background at start, so the
	// first Overview load does not pay for reading the whole window.
	WarmStats bool
	// SessionTTL is how long a login lasts (12 h).
	SessionTTL time.Duration
	// PriceCatalog, when set, is shown in /admin/status.
	PriceCatalog PriceCatalog
	// Cluster, when set, lists the live instances in /admin/status and
	// /admin/channels; *cluster.Member implements it.
	Cluster Cluster
}

// Cluster is the instance list of the database (package cluster).
type Cluster interface {
	Live(ctx context.Context) ([]store.Instance, error)
	Self() store.Instance
}

// Defaults of Options.
const (
	DefaultKeepAlive  = 15 * time.Second
	DefaultSessionTTL = 12 * time.Hour
)

// Server serves /admin/* and /metrics. Create it with New; it is safe for
// concurrent use.
type Server struct {
	cfg     Config
	eng     Engine
	st      store.Store
	logs    LogStats
	metrics *Metrics
	clock   clock.Clock
	log     *slog.Logger

	keepAlive  time.Duration
	started    time.Time
	sessions   *sessions
	limiter    *limiter
	history    *history
	statsCache statsCache // incremental /admin/stats windows

	closeOnce sync.Once
	done      chan struct{} // closed by Close: event streams end
	catalog   PriceCatalog  // may be nil
	cluster   Cluster       // may be nil
}

// New builds a Server from opts.
func New(opts Options) *Server {
	s := &Server{
		cfg: opts.Config, eng: opts.Engine, st: opts.Store, logs: opts.Logs,
		metrics: opts.Metrics, clock: opts.Clock, log: opts.Logger,
		keepAlive: opts.KeepAlive, done: make(chan struct{}), catalog: opts.PriceCatalog,
		cluster: opts.Cluster,
	}
	if s.clock == nil {
		s.clock = clock.Wall{}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.keepAlive <= 0 {
		s.keepAlive = DefaultKeepAlive
	}
	ttl := opts.SessionTTL
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	if s.metrics == nil {
		s.metrics = NewMetrics(s.cfg)
	}
	s.started = s.clock.Now()
	s.sessions = newSessions(s.st, ttl, s.log)
	s.limiter = newLimiter(loginAttempts, loginWindow)
	s.history = newHistory(s.cfg)
	s.metrics.bind(s)
	if opts.WarmStats && s.st != nil {
		go s.warmStats()
	}
	return s
}

// Close ends the open /admin/events streams, so that a graceful shutdown
// does not wait for them. The Server keeps answering other calls.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.done) })
}

// handlerFunc serves one endpoint; an error it returns becomes the JSON
// error response.
type handlerFunc func(s *Server, ctx *fasthttp.RequestCtx) error

type endpoint struct {
	method string
	h      handlerFunc
	public bool // no admin session needed
}

// routes maps exact paths to endpoints. Channel actions, which carry a name
// in the path, are matched in channelAction.
var routes = map[string]endpoint{
	"/admin/login":           {"POST", (*Server).login, true},
	"/admin/logout":          {"POST", (*Server).logout, true},
	"/admin/status":          {"GET", (*Server).status, false},
	"/admin/config":          {"GET", (*Server).config, false},
	"/admin/config/reload":   {"POST", (*Server).reload, false},
	"/admin/channels":        {"GET", (*Server).channels, false},
	"/admin/cooldowns":       {"GET", (*Server).cooldowns, false},
	"/admin/cooldowns/clear": {"POST", (*Server).clearCooldowns, false},
	"/admin/tokens":          {"GET", (*Server).tokens, false},
	"/admin/accounts":        {"GET", (*Server).accounts, false},
	"/admin/logs":            {"GET", (*Server).logsQuery, false},
	"/admin/stats":           {"GET", (*Server).stats, false},
	"/admin/active":          {"GET", (*Server).active, false},
	"/admin/events":          {"GET", (*Server).events, false},
}

// Handler serves the request if its path is /metrics or under /admin/ and
// reports whether it did; other paths are left to the caller.
func (s *Server) Handler(ctx *fasthttp.RequestCtx) bool {
	path := string(ctx.Path())
	switch {
	case path == "/metrics":
		s.serveMetrics(ctx)
		return true
	case path != "/admin" && !strings.HasPrefix(path, "/admin/"):
		return false
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ep, ok := routes[path]
	if !ok {
		ep, ok = channelAction(ctx)
	}
	if !ok {
		ep, ok = logEndpoint(path)
	}
	if !ok {
		ep, ok = pprofEndpoint(path)
	}
	var err error
	switch {
	case !ok:
		err = errNotFound("no admin endpoint " + path)
	case string(ctx.Method()) != ep.method:
		ctx.Response.Header.Set("Allow", ep.method)
		err = &httpError{Status: fasthttp.StatusMethodNotAllowed, Msg: "use " + ep.method + " for " + path}
	}
	if err == nil && !ep.public {
		err = s.authorize(ctx)
	}
	if err == nil && ep.method == "POST" && !ep.public { // login and logout change no state worth forging
		err = s.checkPost(ctx)
	}
	if err == nil {
		err = ep.h(s, ctx)
	}
	if err != nil {
		s.writeError(ctx, err)
	}
	return true
}

// channelActions are the POST /admin/channels/{name}/{verb} endpoints, in
// the order they are matched.
var channelActions = []struct {
	verb string
	h    func(s *Server, ctx *fasthttp.RequestCtx, name string) error
}{
	{"pause", func(s *Server, ctx *fasthttp.RequestCtx, name string) error { return s.setPaused(ctx, name, true) }},
	{"resume", func(s *Server, ctx *fasthttp.RequestCtx, name string) error { return s.setPaused(ctx, name, false) }},
	{"chat", (*Server).chatChannel}, // chat_channel.go
	{"test", (*Server).testChannel}, // test_channel.go
}

// channelAction matches POST /admin/channels/{name}/{verb}. The name is
// taken from the raw path and unescaped, so names with "/" work when the
// client escapes them (%2F).
func channelAction(ctx *fasthttp.RequestCtx) (endpoint, bool) {
	rest, ok := strings.CutPrefix(string(ctx.URI().PathOriginal()), "/admin/channels/")
	if !ok {
		return endpoint{}, false
	}
	for _, a := range channelActions {
		raw, ok := strings.CutSuffix(rest, "/"+a.verb)
		if !ok || raw == "" {
			continue
		}
		name, err := url.PathUnescape(raw)
		if err != nil {
			return endpoint{}, false
		}
		h := a.h
		return endpoint{method: "POST", h: func(s *Server, ctx *fasthttp.RequestCtx) error {
			return h(s, ctx, name)
		}}, true
	}
	return endpoint{}, false
}

// httpError is an error with the status and message the client gets; Err,
// when set, is logged and not shown.
type httpError struct {
	Status int
	Msg    string
	Err    error
}

func (e *httpError) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *httpError) Unwrap() error { return e.Err }

func quote(s string) string { return strconv.Quote(s) }

func errBadRequest(msg string) error { return &httpError{Status: fasthttp.StatusBadRequest, Msg: msg} }
func errNotFound(msg string) error   { return &httpError{Status: fasthttp.StatusNotFound, Msg: msg} }

// errInternal hides err from the client (it may name files or hosts) and
// logs it.
func errInternal(msg string, err error) error {
	return &httpError{Status: fasthttp.StatusInternalServerError, Msg: msg, Err: err}
}

func (s *Server) writeError(ctx *fasthttp.RequestCtx, err error) {
	var he *httpError
	if !errors.As(err, &he) {
		he = &httpError{Status: fasthttp.StatusInternalServerError, Msg: "internal error", Err: err}
	}
	if he.Status >= 500 {
		s.log.Error("admin API", "path", string(ctx.Path()), "status", he.Status, "err", err)
	}
	writeJSON(ctx, he.Status, adminapi.ErrorBody{Error: he.Msg})
}

// writeJSON answers with v as JSON.
func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return errInternal("encoding the response failed", err)
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(append(b, '\n'))
	return nil
}

// readJSON decodes the request body into v; an empty body leaves v as is.
func readJSON(ctx *fasthttp.RequestCtx, v any) error {
	body := ctx.PostBody()
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errBadRequest("request body: " + err.Error())
	}
	return nil
}

// detach gives a handler's store and engine calls a context of their own.
// A *fasthttp.RequestCtx is a context.Context, but it is reused once the
// handler returns, and database/sql keeps watcher goroutines on the
// contexts it is given that may read it later (a data race the race
// detector caught). fasthttp's Done only reports server shutdown, so
// nothing is lost by not passing it on.
func detach(*fasthttp.RequestCtx) context.Context { return context.Background() }
