package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/ccloadtest/wait"
	"github.com/ccload/ccload/internal/clock"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/admin")

const (
	cliPass  = "cli-admin-pass-0042"
	cliAlice = "sk-ccload-alice-cli-token-0001"
	cliBob   = "sk-ccload-bob-cli-token-0002"
)

// cliConfig: two channels on one mock; "main" will cool, "side" stays ok.
const cliConfig = `version: 1
server: {listen: "127.0.0.1:0", admin_password: ` + cliPass + `}
storage: {driver: sqlite, dsn: "{{DB}}"}
routing: {unpriced: allow} # the mock's models have no price: served and flagged
channels:
  - name: main
    priority: 10
    weight: 3
    urls: [{url: "{{MOCK}}", protocols: [anthropic]}]
    keys: [sk-main-upstream-key-0001, sk-main-upstream-key-0002]
    key_strategy: sequential
    models: [claude-x]
  - name: side
    urls: [{url: "{{MOCK}}", protocols: [anthropic]}]
    keys: [sk-side-upstream-key-0003]
    models: [{name: claude-y, upstream: claude-y-2026}]
  - name: off
    urls: [{url: "{{MOCK}}", protocols: [openai]}]
    keys: [sk-off-upstream-key-0004]
    models: [gpt-z]
    enabled: false
tokens:
  - name: alice
    token_sha256: {{ALICE}}
  - name: bob
    token_sha256: {{BOB}}
    models: ["claude-*"]
    cost_limit: 25
    rpm_limit: 30
    expires: "2030-01-01T00:00:00Z"
`

var cliEpoch = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// cliServer is `ccload serve` (serveRun) on a loopback port with a stopped
// clock, so every time and duration in the output is fixed.
type cliServer struct {
	URL, File, DB, Mock string
}

func startCLIServer(t *testing.T) *cliServer {
	t.Helper()
	return startCLIServerWith(t, cliConfig)
}

// startCLIServerWith is startCLIServer with another config text (same
// placeholders).
func startCLIServerWith(t *testing.T, cfgText string) *cliServer {
	t.Helper()
	m := mockupstream.New(mockupstream.Options{})
	mockURL, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	dir := t.TempDir()
	db := filepath.Join(dir, "ccload.db")
	yaml := strings.NewReplacer("{{MOCK}}", mockURL, "{{DB}}", db, "{{ALICE}}", sha256hex(cliAlice),
		"{{BOB}}", sha256hex(cliBob)).Replace(cfgText)
	file := filepath.Join(dir, "ccload.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	io, _, errb := testIO()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serveRun(ctx, &ServeOptions{IO: io, Config: file, Grace: 5 * time.Second,
			Clock: clock.NewFake(cliEpoch), Hostname: "cli-host", Ready: func(a string) { addr <- a }})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case a := <-addr:
		return &cliServer{URL: "http://" + a, File: file, DB: db, Mock: mockURL}
	case err := <-done:
		t.Fatalf("serve exited: %v\n%s", err, errb)
	}
	return nil
}

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// send makes one Anthropic request.
func (s *cliServer) send(t *testing.T, token, model, scenario string, stream bool) int {
	t.Helper()
	body := `{"model":"` + model + `","max_tokens":8,"messages":[{"role":"user","content":"hi"}]`
	if stream {
		body += `,"stream":true`
	}
	req, _ := http.NewRequest("POST", s.URL+"/v1/messages", strings.NewReader(body+"}"))
	req.Header.Set("x-api-key", token)
	req.Header.Set("anthropic-version", "2023-06-01")
	if scenario != "" {
		req.Header.Set("x-mock-scenario", scenario)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// traffic: successes on both channels, a request whose two keys both fail
// with 401 (key cooldowns, then the channel), an unknown model.
func (s *cliServer) traffic(t *testing.T) {
	t.Helper()
	s.send(t, cliAlice, "claude-x", "", false)
	s.send(t, cliBob, "claude-y", "", true)
	s.send(t, cliAlice, "claude-y", "", false)
	s.send(t, cliAlice, "claude-x", "fail-401", false)
	s.send(t, cliBob, "gpt-z", "", false)
	s.waitRows(t, 5)
}

// waitRows waits until n rows are logged and the usage aggregates are
// written with them.
func (s *cliServer) waitRows(t *testing.T, n int) {
	t.Helper()
	c := adminapi.NewClient(s.URL, cliPass, nil)
	wait.Eventually(t, 5*time.Second, fmt.Sprintf("%d rows logged and none queued", n), func() bool {
		p, err := c.Logs(context.Background(), adminapi.LogFilter{})
		if err != nil {
			t.Fatal(err)
		}
		st, _ := c.Status(context.Background())
		return len(p.Rows) == n && st.Storage.Queued == 0
	})
}

func (s *cliServer) client() func() (*adminapi.Client, error) {
	return func() (*adminapi.Client, error) { return adminapi.NewClient(s.URL, cliPass, nil), nil }
}

// instanceID is the random part of the instance id and the server's port,
// replaced in golden files by as many X and N so that columns stay aligned.
var (
	instanceID = regexp.MustCompile(`cli-host-[0-9a-f]{8}`)
	serverPort = regexp.MustCompile(`127\.0\.0\.1:[0-9]{5}`)
)

// golden compares got with testdata/admin/name, after replacing the mock's
// random address, the instance id and the server's port; -update rewrites
// the file.
func golden(t *testing.T, s *cliServer, name, got string) {
	t.Helper()
	got = strings.ReplaceAll(got, s.Mock, "http://MOCK")
	got = strings.ReplaceAll(got, strings.TrimPrefix(s.Mock, "http://"), "MOCK")
	got = instanceID.ReplaceAllString(got, "cli-host-XXXXXXXX")
	got = serverPort.ReplaceAllString(got, "127.0.0.1:NNNNN")
	path := filepath.Join("testdata", "admin", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd -run %s -update)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs (go test ./cmd -update rewrites it)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
	for _, l := range strings.Split(got, "\n") {
		if strings.Contains(name, ".tty.") && len([]rune(l)) > maxWidth {
			t.Errorf("%s: line wider than %d columns: %q", name, maxWidth, l)
		}
	}
	for _, secret := range []string{cliPass, cliAlice, cliBob, "main-upstream-key", "side-upstream-key"} {
		if strings.Contains(got, secret) {
			t.Errorf("%s shows the secret %q", name, secret)
		}
	}
}

func ttyIO(tty, color bool) (IOStreams, *strings.Builder) {
	out := &strings.Builder{}
	return IOStreams{In: strings.NewReader(""), Out: out, Err: io.Discard, IsTTY: tty, Color: color}, out
}

func TestCLIGolden(t *testing.T) {
	s := startCLIServer(t)
	s.traffic(t)
	ctx := context.Background()
	for _, mode := range []struct {
		suffix    string
		tty, json bool
	}{{"tty.txt", true, false}, {"plain.txt", false, false}, {"json", false, true}} {
		io, out := ttyIO(mode.tty, false)
		if err := channelsRun(ctx, &ChannelsOptions{IO: io, Client: s.client(), JSON: mode.json}); err != nil {
			t.Fatal(err)
		}
		golden(t, s, "channels."+mode.suffix, out.String())

		io, out = ttyIO(mode.tty, false)
		if err := tokensRun(ctx, &TokensOptions{IO: io, Client: s.client(), JSON: mode.json}); err != nil {
			t.Fatal(err)
		}
		golden(t, s, "tokens."+mode.suffix, out.String())

		io, out = ttyIO(mode.tty, false)
		err := logsRun(ctx, &LogsOptions{IO: io, Client: s.client(), JSON: mode.json, Loc: time.UTC,
			Now: func() time.Time { return cliEpoch }})
		if err != nil {
			t.Fatal(err)
		}
		golden(t, s, "logs."+mode.suffix, out.String())
	}

	// Filters, and the same rows read from the database directly.
	io, out := ttyIO(false, false)
	err := logsRun(ctx, &LogsOptions{IO: io, Client: s.client(), Status: "4xx", Token: "alice", Loc: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, s, "logs.alice-4xx.plain.txt", out.String())
	io, out = ttyIO(false, false)
	if err := logsRun(ctx, &LogsOptions{IO: io, DB: s.DB, Driver: "sqlite", Status: "4xx", Token: "alice", Loc: time.UTC}); err != nil {
		t.Fatal(err)
	}
	golden(t, s, "logs.alice-4xx.plain.txt", out.String())

	// Colour only when asked for (a terminal without NO_COLOR).
	io, col := ttyIO(true, true)
	if err := channelsRun(ctx, &ChannelsOptions{IO: io, Client: s.client()}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(col.String(), "\x1b[31mcooling\x1b[0m") {
		t.Errorf("no colour on a colour terminal:\n%q", col.String())
	}
	for _, f := range []string{"channels.tty.txt", "channels.plain.txt", "logs.tty.txt"} {
		b, _ := os.ReadFile(filepath.Join("testdata", "admin", f))
		if strings.Contains(string(b), "\x1b[") {
			t.Errorf("%s has colour codes", f)
		}
	}
}

// TestLogsFollow: -f prints the history, then each request as it ends,
// filtered, and stops when the context ends.
func TestLogsFollow(t *testing.T) {
	s := startCLIServer(t)
	s.send(t, cliBob, "claude-y", "", false) // side: the history
	s.waitRows(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- logsRun(ctx, &LogsOptions{IO: IOStreams{Out: out, Err: io.Discard}, Client: s.client(),
			Follow: true, Channel: "side", JSON: true, Loc: time.UTC})
	}()
	// The history is read after subscribing: once it is out, new requests
	// reach the stream.
	wait.Eventually(t, 5*time.Second, "the first line", func() bool { return strings.Count(out.String(), "\n") >= 1 })
	s.send(t, cliAlice, "claude-x", "", false) // main: filtered out
	s.send(t, cliBob, "claude-y", "", true)    // side
	wait.Eventually(t, 5*time.Second, "the second line", func() bool { return strings.Count(out.String(), "\n") >= 2 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("follow: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"id":1,`) || !strings.Contains(lines[0], `"stream":false`) {
		t.Fatalf("history:\n%s", out.String())
	}
	if f := lines[1]; !strings.HasPrefix(f, `{"id":0,"time":"2026-03-04T05:06:07Z"`) ||
		!strings.Contains(f, `"token":"bob","channel":"side"`) || !strings.Contains(f, `"model":"claude-y"`) ||
		!strings.Contains(f, `"status":200`) || !strings.Contains(f, `"stream":true`) {
		t.Fatalf("followed row:\n%s", f)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestAdminClientDiscovery(t *testing.T) {
	var gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		w.Write([]byte(`{"time":"2026-03-04T05:06:07Z","channels":[]}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	// The upstream key's variable is not set here: only server: is read.
	os.WriteFile(file, []byte("version: 1\nserver:\n  listen: 0.0.0.0:9999\n  admin_password: ${T_PASS}\n"+
		"channels:\n  - name: a\n    urls: [{url: \"http://x\"}]\n    keys: [\"${UNSET_KEY}\"]\n    models: [m]\n"), 0o600)
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	cases := []struct {
		name    string
		flags   AdminFlags
		env     map[string]string
		base    string
		wantErr string
	}{
		{"file", AdminFlags{Config: file}, map[string]string{"T_PASS": "p1"}, "http://127.0.0.1:9999", ""},
		{"server flag wins", AdminFlags{Config: file, Server: "10.0.0.1:8080"}, map[string]string{"T_PASS": "p1"}, "http://10.0.0.1:8080", ""},
		{"env server", AdminFlags{}, map[string]string{"CCLOAD_SERVER": "http://h:1", "CCLOAD_PASS": "p"}, "http://h:1", ""},
		{"default", AdminFlags{}, map[string]string{"CCLOAD_PASS": "p"}, "http://127.0.0.1:8080", ""},
		{"no password", AdminFlags{}, map[string]string{}, "", "no admin password: set CCLOAD_PASS"},
		{"file password unset", AdminFlags{Config: file}, map[string]string{}, "", "T_PASS"},
		{"missing file", AdminFlags{Config: filepath.Join(dir, "nope.yaml")}, map[string]string{"CCLOAD_PASS": "p"}, "", "nope.yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl, err := newAdminClient(env(c.env), &c.flags)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || cl.BaseURL() != c.base {
				t.Fatalf("client %v %v, want %s", cl, err, c.base)
			}
		})
	}
	// The password of the file reaches the server as a Bearer token.
	cl, err := newAdminClient(env(map[string]string{"T_PASS": "p1", "CCLOAD_PASS": "other"}), &AdminFlags{Config: file, Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Channels(context.Background()); err != nil || gotAuth != "Bearer p1" {
		t.Fatalf("auth %q err %v", gotAuth, err)
	}
}

func TestNotRunning(t *testing.T) {
	io, _ := ttyIO(true, false)
	err := channelsRun(context.Background(), &ChannelsOptions{IO: io, Client: func() (*adminapi.Client, error) {
		return adminapi.NewClient("http://127.0.0.1:1", "p", nil), nil
	}})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitFail || !strings.HasPrefix(err.Error(), "ccload is not running at http://127.0.0.1:1") {
		t.Fatalf("err = %v", err)
	}
}

func TestLogsFlags(t *testing.T) {
	f := &Factory{}
	var got *LogsOptions
	c := NewCmdLogs(f, func(o *LogsOptions) error { got = o; return nil })
	args := strings.Fields("-f --since 1h --channel a --token t --model m --status 5xx --scope key -n 7 --json -c x.yaml --server h:1")
	c.SetArgs(args)
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	want := LogsOptions{Follow: true, Since: "1h", Channel: "a", Token: "t", Model: "m", Status: "5xx", Scope: "key",
		Limit: 7, JSON: true, Admin: AdminFlags{Config: "x.yaml", Server: "h:1"}, Driver: "sqlite"}
	got.Client, got.IO = nil, IOStreams{}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("opts %+v\nwant %+v", *got, want)
	}

	io, _ := ttyIO(false, false)
	err := logsRun(context.Background(), &LogsOptions{IO: io, Status: "7xx"})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitUsage {
		t.Fatalf("bad status: %v", err)
	}
}
