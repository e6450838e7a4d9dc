package admin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/admin"
	"github.com/ccload/ccload/ccloadtest/gateway"
	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/ccloadtest/wait"
	"github.com/ccload/ccload/cluster"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/store"
)

// Secrets of the test config. No admin response may contain any of them.
const (
	adminPass   = "admin-pass-secret-0042"
	aliceToken  = "sk-ccload-alice-secret-token-0001"
	bobToken    = "sk-ccload-bob-plain-token-0006"
	keyMain1    = "sk-upstream-secret-key-0001"
	keyMain2    = "sk-upstream-secret-key-0002"
	keyBackup   = "sk-backup-secret-key-0004"
	rewriteVal  = "rewrite-secret-value-0003"
	proxyPass   = "proxy-pass-secret-0005"
	urlKeyParam = "url-query-secret-0007"
)

var secrets = []string{adminPass, aliceToken, bobToken, keyMain1, keyMain2, keyBackup, rewriteVal, proxyPass, urlKeyParam}

const testConfig = `version: 1
server: {admin_password: "` + adminPass + `", max_body_bytes: 1MiB}
storage: {driver: sqlite, dsn: "{{DB}}"}
channels:
  - name: main
    priority: 10
    weight: 2
    urls: [{url: "{{MOCK}}", protocols: [anthropic]}]
    keys: [` + keyMain1 + `, ` + keyMain2 + `]
    key_strategy: sequential
    models: [claude-x, {name: claude-y, upstream: claude-y-2026}]
    rpm_limit: 100
    rewrite:
      headers: [{action: override, name: X-Relay-Auth, value: ` + rewriteVal + `}]
      body: [{action: override, path: max_tokens, value: 64}]
  - name: backup
    priority: 1
    urls: [{url: "{{MOCK}}/gemini?key=` + urlKeyParam + `", protocols: [gemini]}]
    keys: [` + keyBackup + `]
    models: [gemini-x]
    proxy: "http://user:` + proxyPass + `@127.0.0.1:9"
    enabled: false
tokens:
  - name: alice
    token_sha256: "{{ALICE_SHA}}"
  - name: bob
    token: ` + bobToken + `
    models: ["claude-*"]
    cost_limit: 10
    rpm_limit: 60
    expires: 2030-01-01
`

var epoch = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// env is a real gateway with its admin API on a loopback port.
type env struct {
	URL    string
	Clock  *clock.Fake
	Src    *config.Source
	Store  store.Store
	Logs   *store.Writer
	Engine *engine.Engine
	Admin  *admin.Server
	Mock   *mockupstream.Server
	Member *cluster.Member
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func start(t *testing.T) *env {
	t.Helper()
	return startOn(t, "")
}

// startOn is start on the SQLite file db ("" for a new one), so that two
// envs on one file stand for two instances sharing a database.
func startOn(t *testing.T, db string) *env {
	t.Helper()
	return startWith(t, db, testConfig, mockupstream.Options{})
}

// startWith is startOn with another config text (same placeholders) and
// mock options.
func startWith(t *testing.T, db, cfgText string, mopts mockupstream.Options) *env {
	t.Helper()
	m := mockupstream.New(mopts)
	mockURL, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })

	if db == "" {
		db = "{{DB}}" // gateway.Start puts a new SQLite file in its directory
	}
	yaml := strings.NewReplacer("{{MOCK}}", mockURL, "{{DB}}", db,
		"{{ALICE_SHA}}", sha(aliceToken)).Replace(cfgText)
	clk := clock.NewFake(epoch) // shared by the engine, cooldowns and admin
	g := gateway.Start(t, yaml, gateway.Options{Engine: engine.Options{Clock: clk}, Admin: true,
		AdminKeepAlive: 50 * time.Millisecond, Hostname: "admin-host", FlushEvery: 10 * time.Millisecond})
	return &env{URL: g.URL, Clock: clk, Src: g.Src, Store: g.Store, Logs: g.Logs,
		Engine: g.Engine, Admin: g.Admin, Mock: m, Member: g.Member}
}

// call sends one HTTP request and returns the response and its body.
func (e *env) call(t *testing.T, method, path string, header map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// proxy sends an Anthropic request as alice.
func (e *env) proxy(t *testing.T, model string, stream bool, scenario string) (int, string) {
	t.Helper()
	body := `{"model":"` + model + `","max_tokens":8,"messages":[{"role":"user","content":"hi"}]`
	if stream {
		body += `,"stream":true`
	}
	h := map[string]string{"x-api-key": aliceToken, "anthropic-version": "2023-06-01", "content-type": "application/json"}
	if scenario != "" {
		h["x-mock-scenario"] = scenario
	}
	resp, b := e.call(t, "POST", "/v1/messages", h, body+"}")
	return resp.StatusCode, b
}

// waitRows waits until the store holds n log rows.
func (e *env) waitRows(t *testing.T, n int) {
	t.Helper()
	wait.Eventually(t, 5*time.Second, fmt.Sprintf("%d log rows", n), func() bool {
		rows, err := e.Store.QueryLogs(context.Background(), store.LogQuery{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return len(rows) >= n
	})
}

var bearer = map[string]string{"Authorization": "Bearer " + adminPass}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
