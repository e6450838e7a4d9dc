package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/admin"
	"github.com/ccload/ccload/cluster"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/listen"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/internal/gcfloor"
	"github.com/ccload/ccload/store"
	"github.com/ccload/ccload/webui"
)

// ServeOptions are the flags of `ccload serve`.
type ServeOptions struct {
	IO     IOStreams
	Config string
	Listen string
	Grace  time.Duration
	// NoWatch turns off watching the file; SIGHUP still reloads it.
	NoWatch bool
	// Ready, when set, is called with the bound address once serving.
	Ready func(addr string)
	// Clock, when set, replaces the wall clock of the engine, cooldowns and
	// admin API (tests).
	Clock clock.Clock
	// AllowDemoToken lets a config accept the public demo token
	// (ccload demo); serve refuses it otherwise.
	AllowDemoToken bool
	// Version is what the instance list shows for this process; "" reads
	// the binary's build info.
	Version string
	// Hostname, when set, replaces os.Hostname in the instance list (tests).
	Hostname string
}

// NewCmdServe builds `ccload serve`.
func NewCmdServe(f *Factory, runF func(*ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{IO: f.IO, Version: f.version().label()}
	c := &cobra.Command{
		Use:   "serve -c FILE",
		Short: "Run the gateway, dashboard and admin API",
		Long: `Run the gateway on server.listen. The config file is watched and reloaded on
change or SIGHUP; an invalid file keeps the old config serving and the error
shows in /health. SIGINT/SIGTERM stop accepting, let in-flight streams finish
(up to --grace) and flush the request logs.

The dashboard is at /web/ and the admin API at /admin/ on the same port,
behind server.admin_password; serve refuses to start without one.`,
		Example: `  CCLOAD_PASS=secret ccload serve -c ccload.yaml
  ccload serve -c /etc/ccload/ccload.yaml --listen 0.0.0.0:8080`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serveRun(ctx, opts)
		},
	}
	c.Flags().StringVarP(&opts.Config, "config", "c", "ccload.yaml", "config file")
	c.Flags().StringVar(&opts.Listen, "listen", "", "listen address (overrides server.listen)")
	c.Flags().DurationVar(&opts.Grace, "grace", 30*time.Second, "how long in-flight requests may take to finish on shutdown")
	c.Flags().BoolVar(&opts.NoWatch, "no-watch", false, "do not watch the config file; reload only on SIGHUP (or POST /admin/config/reload)")
	return c
}

// serveRun runs the gateway until ctx ends, then shuts down gracefully.
// The parts start in the order below and stop in the reverse order
// (runGroup): the dashboard's event streams, then the listener with the
// in-flight requests, the instance heartbeat, spend, cooldowns, the shared
// state feed, the request logs, the background loops, and the store last.
func serveRun(ctx context.Context, opts *ServeOptions) error {
	g := newRunGroup()
	defer g.stop() // early returns; a shutdown stops the group below
	// A heap goal of at least 16 MiB: with the default one, the load
	// benchmark's non-stream requests took 22% more CPU each (package
	// gcfloor). GOGC in the environment overrides it.
	g.onStop(gcfloor.Start(gcfloor.Serve))
	log := slog.New(slog.NewTextHandler(opts.IO.Err, nil))
	src, addr, err := openServeConfig(opts)
	if err != nil {
		return err
	}
	snap := src.Current()

	// A server database that is down at start does not stop the gateway:
	// it serves from the config, storage shows degraded, and the store
	// connects and migrates in the background (docs/operations.md, "Storage").
	st, err := store.OpenLazy(ctx, snap.Storage.Driver, snap.Storage.DSN.Reveal(), store.LazyOptions{Logger: log})
	if err != nil {
		return &exitError{code: exitFail, err: fmt.Errorf("storage (%s): %w", snap.Storage.Driver, err)}
	}
	g.onStop(func() { st.Close() })
	_, pending := st.Pending()
	// The writer and the pruner are what keep serving through a database
	// outage cheap: rows wait in a bounded queue, and nothing on the request
	// path waits for the database (docs/operations.md, "Storage").
	logs := store.NewWriter(st, store.WriterOptions{QueueSize: snap.Storage.LogQueue})
	retention := store.NewRetention(st, store.RetentionOptions{
		Keep:   func() time.Duration { return src.Current().Storage.LogRetention.D() },
		Clock:  opts.Clock,
		Logger: log,
	})
	shared, err := newSharedState(ctx, snap, st, src, log)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	cds := cooldown.New(opts.Clock, shared.persister(st))
	metrics := admin.NewMetrics(src)
	var eng *engine.Engine
	prices := newCatalog(st, log, &eng)
	// The instance list (docs/scale-out.md); eng is set before the first
	// heartbeat reads it.
	member := cluster.New(cluster.Options{Store: st, Version: opts.version(), Clock: opts.Clock, Logger: log,
		Hostname: opts.Hostname,
		InFlight: func() int64 { return eng.InFlight() }})
	accounts := newAccountPool(ctx, st, snap, opts.Clock, log)
	eng = engine.New(engine.Options{Config: src, Logs: metrics.Sink(logs), Cooldowns: cds, Costs: st, Logger: log, Clock: opts.Clock, Catalog: prices,
		Retention: retention, Spend: st, SharedSpend: snap.Storage.Shared, Accounts: accounts})
	adm := admin.New(admin.Options{Config: src, Engine: eng, Store: shared.adminStore(st), Logs: logs, Metrics: metrics, Clock: opts.Clock, Logger: log, WarmStats: true, PriceCatalog: prices,
		Cluster: member})
	eng.SetObserver(adm.MayObserve)
	// What was saved (cooldowns, runtime pauses) applies now, or once the
	// database is up after an outage at start.
	restore := func(ctx context.Context) {
		if err := engine.LoadCooldowns(ctx, st, cds, time.Now()); err != nil {
			log.Warn("could not load saved cooldowns", "err", err)
		}
		if n, err := admin.RestorePauses(ctx, st, eng); err != nil {
			log.Warn("could not load runtime pauses", "err", err)
		} else if n > 0 {
			log.Info("channels paused at runtime (admin API override)", "count", n)
		}
	}
	if pending == nil {
		restore(ctx)
	} else {
		g.loop(func(ctx context.Context) {
			select {
			case <-st.Connected():
			case <-ctx.Done():
				return
			}
			if _, err := st.Pending(); err == nil {
				restore(ctx)
			}
		})
	}

	// Background loops: config reloads, scheduled `check:` probes, log
	// retention (now, then hourly) and the price catalog.
	if !opts.NoWatch {
		g.loop(func(ctx context.Context) {
			if err := src.Watch(ctx); err != nil && !errors.Is(err, context.Canceled) {
				log.Error("config watch stopped", "err", err)
			}
		})
	}
	reloadOnHangUp(g, src, log)
	g.loop(eng.RunChecks)
	g.loop(func(ctx context.Context) { accounts.Run(ctx, accountPoll) }) // sign-ins, sign-outs and refreshes from elsewhere
	g.loop(func(ctx context.Context) { runAccountRefresher(ctx, accounts, src) })
	g.loop(retention.Run)
	catalogCtx, stopCatalog := context.WithCancel(context.Background())
	g.onStop(stopCatalog)
	startCatalog(catalogCtx, prices, src, log)
	src.OnSwap(func(_, cur *config.Snapshot) {
		eng.Sweep(cur)
		setAccountKey(accounts, cur)
		if name, ok := demoTokenIn(cur); ok && !opts.AllowDemoToken {
			log.Error("SECURITY: the reloaded config accepts the public demo token; anyone can use this gateway with it. Delete it.", "token", name, "demo_token", demoToken)
		}
	})

	// Stopped after every request is done, in this order read bottom up:
	// spend is written, cooldowns send their last changes to the feed,
	// which writes them once more before it stops, then the logs flush.
	g.onStop(func() { flushLogs(logs, log) })
	shared.run(eng)
	g.onStop(shared.close)
	g.onStop(func() { cds.Close() })
	g.loop(eng.RunSpend) // spend to shared_spend (and back, when shared)

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	log.Info("ccload serving", "addr", ln.Addr().String(), "config", opts.Config, "storage", snap.Storage.Driver,
		"channels", len(snap.Channels), "tokens", len(snap.Tokens))
	member.SetAddress(ln.Addr().String())
	g.loop(member.Run) // stopped before the store: a clean stop leaves the instance list
	srv := eng.NewServer(eng.Handler(func(ctx *fasthttp.RequestCtx) {
		if !adm.Handler(ctx) && !webui.Handler(ctx) {
			engine.NotFound(ctx)
		}
	}))
	g.serve("gateway", func() error { return srv.Serve(listen.Listener(ln)) }, func() {
		sctx, cancel := context.WithTimeout(context.Background(), opts.Grace)
		defer cancel()
		if err := srv.ShutdownWithContext(sctx); err != nil {
			log.Warn("in-flight requests did not finish within the grace period", "err", err)
		}
		// A stop right after the start can come before Serve took the
		// listener, and Shutdown closes only the listeners it knows:
		// closing it here makes that Serve return at once.
		ln.Close()
	})
	g.onStop(adm.Close) // event streams would hold the shutdown for the whole grace period
	if opts.Ready != nil {
		opts.Ready(ln.Addr().String())
	}

	err = g.wait(ctx)
	log.Info("shutting down: waiting for in-flight requests", "in_flight", eng.InFlight(), "grace", opts.Grace)
	g.stop()
	ws := logs.Stats()
	log.Info("stopped", "logs_written", ws.Written, "logs_dropped", ws.Dropped)
	return err
}

// openServeConfig opens the config file and refuses what serve must not
// run with; it returns the source and the address to listen on.
func openServeConfig(opts *ServeOptions) (*config.Source, string, error) {
	src, err := config.Open(opts.Config)
	if err != nil {
		return nil, "", &exitError{code: exitFail, err: err}
	}
	snap := src.Current()
	if snap.Server.AdminPassword.Reveal() == "" {
		return nil, "", &exitError{code: exitFail, err: fmt.Errorf("%s: server.admin_password is empty; set it (e.g. admin_password: ${CCLOAD_PASS}) so the dashboard and admin API are protected", opts.Config)}
	}
	if name, ok := demoTokenIn(snap); ok && !opts.AllowDemoToken {
		return nil, "", &exitError{code: exitFail, err: fmt.Errorf("%s: token %q accepts the public demo token %s, which anyone who read the README can use; delete it (or try the config with `ccload demo`)", opts.Config, name, demoToken)}
	}
	listen := snap.Server.Listen
	if opts.Listen != "" {
		listen = opts.Listen
	}
	return src, listen, nil
}

// reloadOnHangUp reloads the config on SIGHUP until the group stops.
func reloadOnHangUp(g *runGroup, src *config.Source, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	g.onStop(func() { signal.Stop(hup) })
	g.loop(func(ctx context.Context) {
		for {
			select {
			case <-hup:
				if err := src.Reload(); err != nil {
					log.Error("config reload on SIGHUP failed; the previous config keeps serving", "err", err)
				}
			case <-ctx.Done():
				return
			}
		}
	})
}

// flushLogs writes the queued request logs, for at most 10 s.
func flushLogs(logs *store.Writer, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := logs.Close(ctx); err != nil {
		log.Error("request logs not fully written", "err", err)
	}
}

// version is opts.Version, or the binary's build info.
func (opts *ServeOptions) version() string {
	if opts.Version != "" {
		return opts.Version
	}
	bi, ok := debug.ReadBuildInfo()
	return readVersion(Build{}, bi, ok).label()
}

// Serve runs `ccload serve` with opts until ctx ends; the security suite
// (securitytest/) drives the real server through it.
func Serve(ctx context.Context, opts *ServeOptions) error { return serveRun(ctx, opts) }
