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
func serveRun(ctx context.Context, opts *ServeOptions) error {
	// A heap goal of at least 16 MiB: with the default one, the load
	// benchmark's non-stream requests took 22% more CPU each (package
	// gcfloor). GOGC in the environment overrides it.
	defer gcfloor.Start(gcfloor.Serve)()
	log := slog.New(slog.NewTextHandler(opts.IO.Err, nil))
	src, err := config.Open(opts.Config)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	snap := src.Current()
	if snap.Server.AdminPassword.Reveal() == "" {
		return &exitError{code: exitFail, err: fmt.Errorf("%s: server.admin_password is empty; set it (e.g. admin_password: ${CCLOAD_PASS}) so the dashboard and admin API are protected", opts.Config)}
	}
	if name, ok := demoTokenIn(snap); ok && !opts.AllowDemoToken {
		return &exitError{code: exitFail, err: fmt.Errorf("%s: token %q accepts the public demo token %s, which anyone who read the README can use; delete it (or try the config with `ccload demo`)", opts.Config, name, demoToken)}
	}
	listen := snap.Server.Listen
	if opts.Listen != "" {
		listen = opts.Listen
	}

	// A server database that is down at start does not stop the gateway:
	// it serves from the config, storage shows degraded, and the store
	// connects and migrates in the background (docs/operations.md, "Storage").
	st, err := store.OpenLazy(ctx, snap.Storage.Driver, snap.Storage.DSN.Reveal(), store.LazyOptions{Logger: log})
	if err != nil {
		return &exitError{code: exitFail, err: fmt.Errorf("storage (%s): %w", snap.Storage.Driver, err)}
	}
	defer st.Close()
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
	defer cds.Close()
	loadCooldowns := func(ctx context.Context) {
		if err := engine.LoadCooldowns(ctx, st, cds, time.Now()); err != nil {
			log.Warn("could not load saved cooldowns", "err", err)
		}
	}
	if pending == nil {
		loadCooldowns(ctx)
	}

	metrics := admin.NewMetrics(src)
	var eng *engine.Engine
	prices := newCatalog(st, log, &eng)
	// The instance list (docs/scale-out.md); eng is set before the first
	// heartbeat reads it.
	member := cluster.New(cluster.Options{Store: st, Version: opts.version(), Clock: opts.Clock, Logger: log,
		Hostname: opts.Hostname,
		InFlight: func() int64 { return eng.InFlight() }})
	eng = engine.New(engine.Options{Config: src, Logs: metrics.Sink(logs), Cooldowns: cds, Costs: st, Logger: log, Clock: opts.Clock, Catalog: prices,
		Retention: retention, Spend: st, SharedSpend: snap.Storage.Shared})
	adm := admin.New(admin.Options{Config: src, Engine: eng, Store: shared.adminStore(st), Logs: logs, Metrics: metrics, Clock: opts.Clock, Logger: log, WarmStats: true, PriceCatalog: prices,
		Cluster: member})
	restore := func(ctx context.Context) {
		if n, err := admin.RestorePauses(ctx, st, eng); err != nil {
			log.Warn("could not load runtime pauses", "err", err)
		} else if n > 0 {
			log.Info("channels paused at runtime (admin API override)", "count", n)
		}
	}
	if pending == nil {
		restore(ctx)
	}
	shared.run(eng)
	defer shared.close() // for early returns; a shutdown closes it in order below
	srv := eng.NewServer(eng.Handler(func(ctx *fasthttp.RequestCtx) {
		if !adm.Handler(ctx) && !webui.Handler(ctx) {
			ctx.Error(`{"error":{"message":"not found"}}`, fasthttp.StatusNotFound)
		}
	}))

	watchCtx, stopWatch := context.WithCancel(context.Background())
	defer stopWatch()
	if !opts.NoWatch {
		go func() {
			if err := src.Watch(watchCtx); err != nil && !errors.Is(err, context.Canceled) {
				log.Error("config watch stopped", "err", err)
			}
		}()
	}
	if pending != nil {
		// What was saved before the outage applies once the database is up.
		go func() {
			select {
			case <-st.Connected():
			case <-watchCtx.Done():
				return
			}
			if _, err := st.Pending(); err == nil {
				loadCooldowns(watchCtx)
				restore(watchCtx)
			}
		}()
	}
	go eng.RunChecks(watchCtx) // scheduled `check:` probes
	spendCtx, stopSpend := context.WithCancel(context.Background())
	spendDone := make(chan struct{})
	go func() { defer close(spendDone); eng.RunSpend(spendCtx) }() // spend to shared_spend (and back, when shared)
	defer func() { stopSpend(); <-spendDone }()
	go retention.Run(watchCtx) // storage.log_retention: now, then hourly
	startCatalog(watchCtx, prices, src, log)
	src.OnSwap(func(_, cur *config.Snapshot) {
		eng.Sweep(cur)
		if name, ok := demoTokenIn(cur); ok && !opts.AllowDemoToken {
			log.Error("SECURITY: the reloaded config accepts the public demo token; anyone can use this gateway with it. Delete it.", "token", name, "demo_token", demoToken)
		}
	})
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-hup:
				if err := src.Reload(); err != nil {
					log.Error("config reload on SIGHUP failed; the previous config keeps serving", "err", err)
				}
			case <-watchCtx.Done():
				return
			}
		}
	}()

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	log.Info("ccload serving", "addr", ln.Addr().String(), "config", opts.Config, "storage", snap.Storage.Driver,
		"channels", len(snap.Channels), "tokens", len(snap.Tokens))
	member.SetAddress(ln.Addr().String())
	clusterCtx, stopCluster := context.WithCancel(context.Background())
	clusterDone := make(chan struct{})
	go func() { member.Run(clusterCtx); close(clusterDone) }()
	// Runs before st.Close: a clean stop removes this instance from the list.
	defer func() { stopCluster(); <-clusterDone }()
	if opts.Ready != nil {
		opts.Ready(ln.Addr().String())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(engine.Listener(ln)) }()

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: waiting for in-flight requests", "in_flight", eng.InFlight(), "grace", opts.Grace)
	adm.Close() // event streams would hold the shutdown for the whole grace period
	sctx, cancel := context.WithTimeout(context.Background(), opts.Grace)
	defer cancel()
	if err := srv.ShutdownWithContext(sctx); err != nil {
		log.Warn("in-flight requests did not finish within the grace period", "err", err)
	}
	stopSpend() // requests are done: write their spend
	<-spendDone
	cds.Close()    // its last changes go to the feed...
	shared.close() // ...which writes them once more before it stops
	dctx, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if err := logs.Close(dctx); err != nil {
		log.Error("request logs not fully written", "err", err)
	}
	ws := logs.Stats()
	log.Info("stopped", "logs_written", ws.Written, "logs_dropped", ws.Dropped)
	return nil
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
