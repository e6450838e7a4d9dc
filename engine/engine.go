// Package engine is the gateway: it authenticates client tokens, picks a
// channel, key and URL for each request, sends it upstream (converting
// between protocol families when the URL speaks another one), relays the
// answer and records one log row per request.
//
// The engine reads configuration only through the *config.Snapshot it is
// handed; it never reads files or the environment itself.
package engine

import (
	"crypto/x509"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/account"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/live"
	"github.com/ccload/ccload/engine/responsesws"
	"github.com/ccload/ccload/engine/spend"
	"github.com/ccload/ccload/engine/upstream"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/pricing"
	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/passthrough"
	"github.com/ccload/ccload/store"
	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"
)

// Snapshots yields the config snapshot in force; each request loads it once
// and keeps it to the end, so a reload never changes a request midway.
type Snapshots interface {
	Current() *config.Snapshot
	Status() config.Status
}

// LogSink takes finished request rows; Add must never block the caller.
type LogSink interface {
	Add(row store.LogRow)
	Stats() store.WriterStats
}

// Options wires an Engine.
type Options struct {
	Config    Snapshots
	Logs      LogSink            // may be nil (logs are then discarded and counted)
	Cooldowns *cooldown.Registry // may be nil: a private in-memory registry is made
	Clock     clock.Clock        // nil = wall clock
	Logger    *slog.Logger       // nil = slog.Default()
	// Costs gives the spend recorded so far, for cost limits; nil = start
	// from zero (tests, no database).
	Costs spend.CostStore
	// Spend receives every request's cost in batches (RunSpend); nil =
	// none. With SharedSpend (storage.shared) cost limits count from its
	// totals, which every instance adds to, instead of from Costs.
	Spend       spend.SharedStore
	SharedSpend bool
	// Transport sends upstream requests; nil = a tuned http.Transport per
	// proxy setting. Tests may inject one.
	Transport http.RoundTripper
	// UpstreamRoots are the certificate authorities https:// and wss://
	// upstreams and https proxies are verified against, in place of the
	// system's (nil: the system's). Tests give their TLS mock's.
	UpstreamRoots *x509.CertPool
	// Retention, when set, reports log_retention runs in /health.
	Retention interface{ Stats() store.RetentionStats }
	// Catalog gives the price catalog's current copy; nil = no catalog
	// (the embedded table and the file's pricing: entries price).
	Catalog PriceCatalog
	// Accounts holds the signed-in accounts of oauth channels; nil = none
	// (an oauth channel's attempts then fail over to other channels).
	Accounts *account.Pool
}

// PriceCatalog yields the prices of the price catalog's current good copy,
// or nil when there is none. The table must not change once returned.
type PriceCatalog interface{ Prices() *pricing.Table }

// Engine serves the proxy endpoints. Create it with New; it is safe for
// concurrent use.
type Engine struct {
	cfg    Snapshots
	logs   LogSink
	clock  clock.Clock
	log    *slog.Logger
	reg    *registry // all runtime state that outlives a snapshot (registry.go)
	bus    *live.Bus
	active *active

	// observer says whether a request may see /health's details; set
	// once before serving (SetObserver).
	observer func(*fasthttp.RequestCtx) bool

	catalog   PriceCatalog
	upstream  *upstream.Clients
	shared    Publisher // storage.shared: where pins are published (shared.go); nil = not shared
	started   time.Time
	retention interface{ Stats() store.RetentionStats }

	ws wsState // the Responses WebSocket transport (websocket.go)
	// views: what the engine derived from the snapshot in force
	// (registry.go).
	views atomic.Pointer[snapView]

	inflight     atomic.Int64
	unauthorized atomic.Int64
	noLogs       atomic.Int64

	accounts *account.Pool // subscription accounts (accounts.go)
}

// New builds an Engine from opts.
func New(opts Options) *Engine {
	if opts.Clock == nil {
		opts.Clock = clock.Wall{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	e := &Engine{
		cfg:       opts.Config,
		logs:      opts.Logs,
		clock:     opts.Clock,
		log:       opts.Logger,
		retention: opts.Retention,
		catalog:   opts.Catalog,
		reg:       newRegistry(opts, opts.Clock),
		accounts:  opts.Accounts,
	}
	// The session store reports to the transport's stats, which live
	// with the engine's other WebSocket counters.
	e.reg.wsSessions = responsesws.NewSessions(&e.ws.stats)
	e.bus = live.NewBus()
	e.active = newActive()
	e.upstream = upstream.New(opts.Transport, opts.UpstreamRoots)
	e.started = e.clock.Now()
	if e.cfg != nil {
		if snap := e.cfg.Current(); snap != nil {
			a := snap.Routing.Affinity
			e.reg.pins.Resize(a.MaxSessions, a.TTL.D())
			// The embedded price list is parsed now rather than by the
			// first request: that parse runs deeper than a request may
			// (TestRequestsFitEightKiBStack) and costs it milliseconds.
			e.Prices(snap)
		}
	}
	return e
}

// InFlight is the number of client requests being served now.
func (e *Engine) InFlight() int64 { return e.inflight.Load() }

// Cooldowns exposes the registry (admin API, CLI).
func (e *Engine) Cooldowns() *cooldown.Registry { return e.reg.cooldowns }

// Handler returns the fasthttp handler for the proxy endpoints and /health.
// Every other path goes to extra, where the caller mounts the other
// surfaces (cmd/serve.go: admin API, dashboard, metrics); nil answers 404.
func (e *Engine) Handler(extra fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if badPath(ctx.URI().PathOriginal()) {
			writeError(ctx, pathFamily(ctx.URI().PathOriginal()), &clientError{Status: 400, Msg: "request path has dot segments"})
			return
		}
		if e.route(ctx) {
			return
		}
		if extra != nil {
			extra(ctx)
			return
		}
		NotFound(ctx)
	}
}

// NotFound answers a path no surface serves with a 404 in the error shape
// of the family the path aims at (pathFamily), so that a client's SDK can
// read it.
func NotFound(ctx *fasthttp.RequestCtx) {
	writeError(ctx, pathFamily(ctx.URI().PathOriginal()), &clientError{Status: fasthttp.StatusNotFound, Msg: "no endpoint " + string(ctx.Method()) + " " + string(ctx.Path())})
}

// op is what a proxy endpoint asks for.
type op int

const (
	opGenerate    op = iota // a model call, relayed upstream
	opCountTokens           // answered locally
	opListModels            // answered locally
	// opWarmUp is a WebSocket warm-up (generate: false): admitted and
	// logged as a turn, answered by the socket, sent to no upstream.
	opWarmUp
)

// endpoint is a parsed proxy path.
type endpoint struct {
	family protocol.Family
	op     op
	model  string // Gemini carries the model in the path
	stream bool   // Gemini carries the stream flag in the path
	// pass is set for an OpenAI endpoint relayed natively (passthrough.go).
	pass *passthrough.Endpoint
}

// route serves the request if its path is one of the engine's and reports
// whether it did.
func (e *Engine) route(ctx *fasthttp.RequestCtx) bool {
	path := string(ctx.Path())
	if path == "/health" {
		e.serveHealth(ctx)
		return true
	}
	if isSocket(ctx) {
		e.serveSocket(ctx)
		return true
	}
	ep, ok := parseEndpoint(string(ctx.Method()), path, ctx.Request.Header.Peek("anthropic-version") != nil)
	if !ok {
		return false
	}
	e.serveProxy(ctx, ep)
	return true
}

// isSocket reports whether the request asks to upgrade a Responses path
// to the WebSocket transport.
func isSocket(ctx *fasthttp.RequestCtx) bool {
	if !ctx.IsGet() || !websocket.FastHTTPIsWebSocketUpgrade(ctx) {
		return false
	}
	switch string(ctx.Path()) {
	case "/v1/responses", "/responses", "/backend-api/codex/responses":
		return true
	}
	return false
}

// parseEndpoint maps a method and path to a proxy endpoint (design §4).
func parseEndpoint(method, path string, anthropicHeader bool) (endpoint, bool) {
	if method == "GET" {
		switch path {
		case "/v1/models", "/models":
			f := protocol.OpenAI
			if anthropicHeader {
				f = protocol.Anthropic
			}
			return endpoint{family: f, op: opListModels}, true
		case "/v1beta/models", "/v1/models/":
			return endpoint{family: protocol.Gemini, op: opListModels}, true
		}
		return endpoint{}, false
	}
	if method != "POST" {
		return endpoint{}, false
	}
	switch path {
	case "/v1/messages":
		return endpoint{family: protocol.Anthropic}, true
	case "/v1/messages/count_tokens":
		return endpoint{family: protocol.Anthropic, op: opCountTokens}, true
	case "/v1/chat/completions", "/chat/completions":
		return endpoint{family: protocol.OpenAI}, true
	case "/v1/responses", "/responses", "/backend-api/codex/responses":
		return endpoint{family: protocol.Responses}, true
	}
	if p, ok := passthrough.Lookup(path); ok {
		return endpoint{family: protocol.OpenAI, pass: p}, true
	}
	for _, prefix := range []string{"/v1beta/models/", "/v1/models/"} {
		rest, ok := strings.CutPrefix(path, prefix)
		if !ok {
			continue
		}
		model, method, ok := strings.Cut(rest, ":")
		if !ok || model == "" {
			return endpoint{}, false
		}
		ep := endpoint{family: protocol.Gemini, model: model}
		switch method {
		case "generateContent":
		case "streamGenerateContent":
			ep.stream = true
		case "countTokens":
			ep.op = opCountTokens
		default:
			return endpoint{}, false
		}
		return ep, true
	}
	return endpoint{}, false
}

// pathFamily is the family whose error shape answers a request refused
// before its path is parsed (dot segments): the family of the endpoint the
// path aims at, read from its unescaped prefix, as parseEndpoint would;
// OpenAI's for anything else. A client's SDK parses its own shape only.
func pathFamily(raw []byte) protocol.Family {
	path, _, _ := strings.Cut(string(raw), "?")
	if u, err := url.PathUnescape(path); err == nil {
		path = u
	}
	switch {
	case strings.HasPrefix(path, "/v1beta/"),
		strings.HasPrefix(path, "/v1/models/") && strings.Contains(path, ":"):
		return protocol.Gemini
	case strings.HasPrefix(path, "/v1/messages"):
		return protocol.Anthropic
	case strings.HasPrefix(path, "/v1/responses"), strings.HasPrefix(path, "/responses"),
		strings.HasPrefix(path, "/backend-api/codex/"):
		return protocol.Responses
	}
	return protocol.OpenAI
}
