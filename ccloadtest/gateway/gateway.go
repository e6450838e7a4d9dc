// Package gateway starts a real ccload gateway in the test process: the
// engine (and, when asked, the admin API) on a loopback port, serving a
// config file written to a temporary directory, with its SQLite (or other)
// store and log writer, wired as `ccload serve` wires them. The test
// packages that need the gateway in process share it; the ones that need
// the whole command run `ccload serve` itself (cmd.Serve). Only tests
// import it (internal/layers keeps product code out of ccloadtest).
package gateway

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/admin"
	"github.com/ccload/ccload/cluster"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/listen"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/store"
)

// Options say what to start beside the engine.
type Options struct {
	// Engine is passed to engine.New (Transport, Clock…); Config, Logs
	// and, with Admin, Cooldowns are filled in.
	Engine engine.Options
	// Admin mounts the admin API and an instance-list member beside the
	// proxy, with cooldowns persisted to the store, as serve does.
	Admin bool
	// AdminKeepAlive is the admin event streams' keep-alive (0: admin's).
	AdminKeepAlive time.Duration
	// Hostname names the instance in the instance list (Admin).
	Hostname string
	// FlushEvery is the log writer's flush interval (default 20 ms, so
	// tests see their rows soon).
	FlushEvery time.Duration
}

// Gateway is a running gateway and the parts a test inspects.
type Gateway struct {
	URL       string // http://127.0.0.1:port
	Dir       string // the temporary directory holding File
	File      string // the config file
	Src       *config.Source
	Store     store.Store
	Logs      *store.Writer
	Cooldowns *cooldown.Registry // with Admin; else the engine's own
	Engine    *engine.Engine
	Admin     *admin.Server   // nil without Options.Admin
	Member    *cluster.Member // nil without Options.Admin
}

// Start writes yaml to a new temporary directory ({{DB}} replaced by a
// SQLite file in it), opens it and serves it until the test ends.
func Start(t testing.TB, yaml string, opts Options) *Gateway {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "ccload.yaml")
	yaml = strings.ReplaceAll(yaml, "{{DB}}", filepath.Join(dir, "data", "ccload.db"))
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := config.Open(file)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	snap := src.Current()
	st, err := store.Open(context.Background(), snap.Storage.Driver, snap.Storage.DSN.Reveal())
	if err != nil {
		t.Fatal(err)
	}
	if opts.FlushEvery == 0 {
		opts.FlushEvery = 20 * time.Millisecond
	}
	logs := store.NewWriter(st, store.WriterOptions{FlushEvery: opts.FlushEvery})
	g := &Gateway{Dir: dir, File: file, Src: src, Store: st, Logs: logs}

	eopts := opts.Engine
	eopts.Config, eopts.Logs = src, logs
	var metrics *admin.Metrics
	if opts.Admin {
		clk := eopts.Clock
		if clk == nil {
			clk = clock.Wall{}
		}
		g.Cooldowns = cooldown.New(clk, engine.StorePersister(st))
		metrics = admin.NewMetrics(src)
		eopts.Cooldowns, eopts.Logs = g.Cooldowns, metrics.Sink(logs)
	}
	g.Engine = engine.New(eopts)
	handler := fasthttp.RequestHandler(nil)
	if opts.Admin {
		g.Member = cluster.New(cluster.Options{Store: st, Version: "v-test", Clock: eopts.Clock, Hostname: opts.Hostname,
			InFlight: g.Engine.InFlight})
		g.Admin = admin.New(admin.Options{Config: src, Engine: g.Engine, Store: st, Logs: logs, Metrics: metrics,
			Clock: eopts.Clock, KeepAlive: opts.AdminKeepAlive, Cluster: g.Member})
		handler = func(ctx *fasthttp.RequestCtx) {
			if !g.Admin.Handler(ctx) {
				ctx.Error("not found", fasthttp.StatusNotFound)
			}
		}
	}
	srv := g.Engine.NewServer(g.Engine.Handler(handler))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(listen.Listener(ln)) // as ccload serve does
	g.URL = "http://" + ln.Addr().String()
	if g.Member != nil {
		g.Member.SetAddress(ln.Addr().String())
	}
	// Stopped in serve's order: event streams, the listener with the
	// requests in flight, cooldowns, the logs, the store.
	t.Cleanup(func() {
		if g.Admin != nil {
			g.Admin.Close()
		}
		srv.Shutdown()
		if g.Cooldowns != nil {
			g.Cooldowns.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		logs.Close(ctx)
		st.Close()
	})
	return g
}
