package securitytest

import (
	"context"
	"github.com/ccload/ccload/ccloadtest/gateway"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/cmd"
)

// runCLI runs `ccload args...` in dir with env as its whole environment
// and returns its stderr and error.
func runCLI(t *testing.T, dir string, env map[string]string, args ...string) (string, error) {
	t.Helper()
	return runCLIOut(t, dir, env, io.Discard, args...)
}

// runCLIOut is runCLI writing its standard output (not a terminal) to out.
func runCLIOut(t *testing.T, dir string, env map[string]string, out io.Writer, args ...string) (string, error) {
	t.Helper()
	t.Chdir(dir)
	var errb gateway.LogBuffer
	f := &cmd.Factory{IO: cmd.IOStreams{In: strings.NewReader(""), Out: out, Err: &errb},
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	root := cmd.NewRootCmd(f)
	root.SetArgs(args)
	root.SetOut(io.Discard)
	root.SetErr(&errb)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return errb.String(), err
}

// Finding: `ccload channels|logs|tokens` read ./ccload.yaml without being
// asked, expanded its admin_password (${ANY_VAR}, ${file:…}) from the
// user's environment and sent it as a Bearer token over plain http to
// whatever server.listen named: a cloned config repository could harvest
// a secret. A file the CLI was not given with -c lends it only a loopback
// listen address and a literal password, never an expansion.
func TestCLIDoesNotSendSecretsFromAnImplicitConfig(t *testing.T) {
	var mu sync.Mutex
	var auths []string
	harvest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Write([]byte(`{"time":"2026-03-04T05:06:07Z","channels":[]}`))
	}))
	defer harvest.Close()
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret.txt")
	os.WriteFile(secretFile, []byte("file-secret-XYZ"), 0o600)
	for _, pw := range []string{"${SSH_AUTH_SECRET}", "${file:" + secretFile + "}"} {
		yaml := "version: 1\nserver:\n  listen: " + strings.TrimPrefix(harvest.URL, "http://") + "\n  admin_password: " + pw + "\n"
		if err := os.WriteFile(filepath.Join(dir, "ccload.yaml"), []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		runCLI(t, dir, map[string]string{"SSH_AUTH_SECRET": "env-secret-XYZ"}, "channels")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range auths {
		if strings.Contains(a, "secret-XYZ") {
			t.Errorf("the CLI sent a secret expanded from ./ccload.yaml: %q", a)
		}
	}
}

// Finding (same): the implicit file's server.listen may name any host. Only
// a loopback address is taken from it; another is ignored.
func TestCLITakesOnlyLoopbackFromAnImplicitConfig(t *testing.T) {
	dir := t.TempDir()
	yaml := "version: 1\nserver:\n  listen: 192.0.2.10:8080\n  admin_password: literal-pw\n"
	if err := os.WriteFile(filepath.Join(dir, "ccload.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	stderr, err := runCLI(t, dir, map[string]string{}, "channels")
	if err == nil || strings.Contains(err.Error()+stderr, "192.0.2.10") {
		t.Errorf("the CLI went to the implicit file's remote host: %v %s", err, stderr)
	}
}

// Finding: `ccload check`'s TSV output (for scripts, when stdout is not a
// terminal) replaced tabs and line breaks but kept escape sequences from
// an upstream's error message, which a terminal showing the file obeys.
// Its fields are escaped like every other CLI cell (internal/termtext).
func TestCheckTSVIsTerminalSafe(t *testing.T) {
	m := mockupstream.New(mockupstream.Options{Script: func(*mockupstream.Recorded) mockupstream.Reply {
		return mockupstream.Reply{Status: 400, Raw: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"bad\u001b]0;owned\u0007\u001b[2J request\u009b1m"}}`)}
	}})
	up, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "ccload.yaml")
	yaml := strings.ReplaceAll(config("", up, ""), "{{DB}}", filepath.Join(dir, "c.db"))
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var out gateway.LogBuffer
	runCLIOut(t, dir, map[string]string{}, &out, "check", "-c", file, "--model", "claude-x")
	got := out.String()
	if !strings.Contains(got, "request") {
		t.Fatalf("no probe line in the output:\n%s", got)
	}
	for _, bad := range []string{"\x1b", "\x07", "\u009b"} {
		if strings.Contains(got, bad) {
			t.Errorf("TSV output holds %q:\n%q", bad, got)
		}
	}
}
