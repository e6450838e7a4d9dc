package securitytest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/gateway"
	"github.com/ccload/ccload/ccloadtest/wait"
	"github.com/ccload/ccload/cmd"
	"github.com/ccload/ccload/store"
)

// token is the client token every test config accepts.
const token = "sk-ccload-security-token-0123456789"

// channelKey is the upstream key of every test channel: a leak of it in
// any output is what the redaction tests look for. Its shape matches no
// credential pattern, so only redaction of the exact key catches it.
const channelKey = "upk-Zq81mXv0Lr2Pa9Tw"

// adminPassword is the dashboard password of every test config.
const adminPassword = "admin-pw-Security-1"

// server is a running `ccload serve` (ccloadtest/gateway).
type server struct{ *gateway.Served }

// config builds a config file: server keys (YAML lines under server:,
// indented two spaces) and one Anthropic channel "a" at upstream serving
// model claude-x, plus extra YAML appended at the end.
func config(serverKeys, upstream, extra string) string {
	sum := sha256.Sum256([]byte(token))
	return `version: 1
server:
  listen: "127.0.0.1:0"
  admin_password: "` + adminPassword + `"
` + serverKeys + `
storage: {driver: sqlite, dsn: "{{DB}}"}
channels:
  - name: a
    urls: [{url: "` + upstream + `", protocols: [anthropic, openai, responses, gemini]}]
    keys: [` + channelKey + `]
    models: [claude-x, gemini-x, gpt-x]
tokens:
  - {name: t, token_sha256: ` + hex.EncodeToString(sum[:]) + `}
` + extra
}

// start writes yaml ({{DB}} replaced) and runs serve until the test ends.
func start(t *testing.T, yaml string) *server { return &server{gateway.Serve(t, yaml)} }

// do sends one request and returns the status and body.
func do(t *testing.T, method, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
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

// logs waits until the server has written at least n request rows and
// returns them, newest first, read from its SQLite file.
func (s *server) logs(t *testing.T, n int) []store.LogRow {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite", s.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var rows []store.LogRow
	wait.Eventually(t, 10*time.Second, fmt.Sprintf("%d log rows", n), func() bool {
		var err error
		if rows, err = st.QueryLogs(context.Background(), store.LogQuery{Limit: 100}); err != nil {
			t.Fatal(err)
		}
		return len(rows) >= n
	})
	return rows
}

const anthropicBody = `{"model":"claude-x","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`

// leaks returns the secrets found in the server's database files (rows,
// attempts, cooldowns, whatever page they sit on) and its stderr.
func (s *server) leaks(t *testing.T, secrets ...string) []string {
	t.Helper()
	var found []string
	var all []byte
	for _, suffix := range []string{"", "-wal", "-journal"} {
		b, err := os.ReadFile(s.DB + suffix)
		if err == nil {
			all = append(all, b...)
		}
	}
	for _, sec := range secrets {
		if bytes.Contains(all, []byte(sec)) {
			found = append(found, "database: "+sec)
		}
		if strings.Contains(s.Stderr.String(), sec) {
			found = append(found, "stderr: "+sec)
		}
	}
	return found
}

// cooldowns waits until the server has stored at least n cooldowns.
func (s *server) cooldowns(t *testing.T, n int) []store.Cooldown {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite", s.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var cds []store.Cooldown
	wait.Eventually(t, 10*time.Second, fmt.Sprintf("%d stored cooldowns", n), func() bool {
		var err error
		if cds, err = st.ListCooldowns(context.Background(), time.Now()); err != nil {
			t.Fatal(err)
		}
		return len(cds) >= n
	})
	return cds
}

// adminGet calls an admin endpoint with the password as a Bearer token.
func adminGet(t *testing.T, s *server, path string) (*http.Response, string) {
	t.Helper()
	return do(t, "GET", s.URL+path, "", map[string]string{"Authorization": "Bearer " + adminPassword})
}

// serveOnce runs serve on yaml and returns its error if it refuses to
// start; nil if it started (it is stopped at once).
func serveOnce(t *testing.T, yaml string) error {
	t.Helper()
	dir := t.TempDir()
	yaml = strings.ReplaceAll(yaml, "{{DB}}", filepath.Join(dir, "ccload.db"))
	file := filepath.Join(dir, "ccload.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	io := cmd.IOStreams{In: strings.NewReader(""), Out: io.Discard, Err: &gateway.LogBuffer{}}
	done := make(chan error, 1)
	go func() {
		done <- cmd.Serve(ctx, &cmd.ServeOptions{IO: io, Config: file, Grace: time.Second, NoWatch: true, Ready: func(string) { cancel() }})
	}()
	err := <-done
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// replaceOnce replaces old in s and panics when s does not hold it, so that
// a config helper cannot silently stop doing what it says.
func replaceOnce(s, old, new string) string {
	if !strings.Contains(s, old) {
		panic("config has no " + old)
	}
	return strings.Replace(s, old, new, 1)
}
