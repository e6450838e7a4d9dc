package engine_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/ccloadtest/wait"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/store"
)

// testToken is the client token every test config accepts (as its sha256).
const testToken = "sk-ccload-test-token-0123456789"

// gateway is a real ccload engine on a loopback port, with its config file,
// SQLite log store and writer.
type gateway struct {
	URL    string
	Dir    string
	File   string
	Src    *config.Source
	Store  store.Store
	Logs   *store.Writer
	Engine *engine.Engine
	srv    *fasthttp.Server
}

// startMock starts a mock upstream and returns it with its base URL.
func startMock(t *testing.T, opts mockupstream.Options) (*mockupstream.Server, string) {
	t.Helper()
	m := mockupstream.New(opts)
	u, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, u
}

// startGateway writes yaml (with {{TOKEN_SHA}} replaced) to a temp dir and
// serves it.
func startGateway(t *testing.T, yaml string) *gateway {
	t.Helper()
	return startGatewayWith(t, yaml, engine.Options{})
}

// startGatewayWith is startGateway with engine options (Transport, Clock…);
// Config and Logs are filled in.
func startGatewayWith(t *testing.T, yaml string, opts engine.Options) *gateway {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "ccload.yaml")
	yaml = strings.ReplaceAll(yaml, "{{TOKEN_SHA}}", sha256hex(testToken))
	yaml = strings.ReplaceAll(yaml, "{{DB}}", filepath.Join(dir, "data", "ccload.db"))
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := config.Open(file)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	snap := src.Current()
	ctx := context.Background()
	st, err := store.Open(ctx, snap.Storage.Driver, snap.Storage.DSN.Reveal())
	if err != nil {
		t.Fatal(err)
	}
	logs := store.NewWriter(st, store.WriterOptions{FlushEvery: 20 * time.Millisecond})
	opts.Config, opts.Logs = src, logs
	eng := engine.New(opts)
	srv := eng.NewServer(eng.Handler(nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(engine.Listener(ln)) // as ccload serve does
	g := &gateway{URL: "http://" + ln.Addr().String(), Dir: dir, File: file, Src: src, Store: st, Logs: logs, Engine: eng, srv: srv}
	t.Cleanup(func() {
		srv.Shutdown()
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		logs.Close(cctx)
		st.Close()
	})
	return g
}

// waitLogs flushes the writer and returns the logged rows, newest first.
func (g *gateway) waitLogs(t *testing.T, n int) []store.LogRow {
	t.Helper()
	var rows []store.LogRow
	wait.Eventually(t, 5*time.Second, fmt.Sprintf("%d log rows", n), func() bool {
		var err error
		if rows, err = g.Store.QueryLogs(context.Background(), store.LogQuery{Limit: 1000}); err != nil {
			t.Fatal(err)
		}
		return len(rows) >= n
	})
	return rows
}
