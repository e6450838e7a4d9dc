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
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/account"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/responsesws"
	"github.com/ccload/ccload/engine/upstream"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/pricing"
	"github.com/ccload/ccload/store"
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
	Costs CostStore
	// Spend receives every request's cost in batches (RunSpend); nil =
	// none. With SharedSpend (storage.shared) cost limits count from its
	// totals, which every instance adds to, instead of from Costs.
	Spend       SpendStore
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
	bus    *Bus
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
	// (snapview.go).
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
	e.bus = NewBus()
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
