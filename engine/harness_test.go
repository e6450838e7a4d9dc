package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	gw "github.com/ccload/ccload/ccloadtest/gateway"
	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/ccloadtest/wait"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/store"
)

// testToken is the client token every test config accepts (as its sha256).
const testToken = "sk-ccload-test-token-0123456789"

// gateway is a real ccload engine on a loopback port, with its config file,
// SQLite log store and writer (ccloadtest/gateway).
type gateway struct{ *gw.Gateway }

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
	yaml = strings.ReplaceAll(yaml, "{{TOKEN_SHA}}", sha256hex(testToken))
	return &gateway{gw.Start(t, yaml, gw.Options{Engine: opts})}
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
