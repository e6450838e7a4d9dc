//go:build clients

package clients

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// The real agent CLIs through a subscription account channel
// (docs/accounts.md): ccload signs an account in with `ccload login codex
// --import` of a Codex CLI auth.json issued by the mock sign-in server, and
// sends the CLIs' turns, whatever family they speak, to the mock Codex
// backend, which enforces the backend's dialect (the account's bearer
// token, chatgpt-account-id, store: false, no refused fields) in front of
// the mock Responses upstream. The CLIs authenticate with their ccload
// token only.

func TestClientsCodexAccount(t *testing.T) { accountCells(t, "codex", false) }

// TestClientsCodexAccountWebSocket: the Codex CLI over the Responses
// WebSocket, through an account channel with websockets: true, so the
// turn reaches the backend over its WebSocket too.
func TestClientsCodexAccountWebSocket(t *testing.T) { accountCells(t, "codex-ws", true) }

// TestClientsClaudeCodeAccount: Anthropic Messages converted to the Codex
// backend's Responses dialect and its stream back.
func TestClientsClaudeCodeAccount(t *testing.T) { accountCells(t, "claude-code", false) }

// TestClientsGeminiAccount: Gemini generateContent converted likewise.
func TestClientsGeminiAccount(t *testing.T) { accountCells(t, "gemini-cli", false) }

// accountRig is a mock upstream behind a mock Codex backend and sign-in
// server, and `ccload serve` with one codex account channel, alice signed
// in.
type accountRig struct {
	mock    *mockupstream.Server
	backend *mockupstream.CodexBackend
	base    string
	dir     string
}

const accountToken = "sk-ccload-clients-account-0123456789"

func newAccountRig(t *testing.T, websockets bool) *accountRig {
	t.Helper()
	bin := buildCcload(t)
	m := mockupstream.New(mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		r.Header.Set(mockupstream.ScenarioHeader, "shell")
		return mockupstream.DefaultReply(r)
	}})
	if _, err := m.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	signin := &mockupstream.SignIn{}
	si := httptest.NewServer(signin)
	t.Cleanup(si.Close)
	backend := &mockupstream.CodexBackend{SignIn: signin, Inner: m}
	be := httptest.NewServer(backend)
	t.Cleanup(be.Close)

	rd := t.TempDir()
	sum := sha256.Sum256([]byte(accountToken))
	cfg := fmt.Sprintf(`version: 1
server: {listen: "127.0.0.1:0", admin_password: clients-test, secret_key: "%s"}
storage: {driver: sqlite, dsn: %q}
routing: {max_attempts: 1}
channels:
  - name: chatgpt
    oauth: codex
    accounts: [alice]
    urls: [%q]
    oauth_issuer: %q
    websockets: %t
    models: [%s]
tokens:
  - {name: via-account, token_sha256: %s}
`, strings.Repeat("ab", 32), filepath.Join(rd, "ccload.db"), be.URL, si.URL, websockets, strings.Join(models, ", "), hex.EncodeToString(sum[:]))
	file := filepath.Join(rd, "ccload.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}

	// Sign alice in as a user would: the Codex CLI's auth.json, imported.
	at, rt, id := signin.Issue("acct-alice")
	auth, _ := json.Marshal(map[string]any{"tokens": map[string]any{"id_token": id, "access_token": at, "refresh_token": rt, "account_id": "acct-alice"},
		"last_refresh": time.Now().UTC()})
	authFile := filepath.Join(rd, "auth.json")
	if err := os.WriteFile(authFile, auth, 0o600); err != nil {
		t.Fatal(err)
	}
	login := exec.Command(bin, "login", "codex", "-c", file, "--channel", "chatgpt", "--account", "alice", "--import", authFile)
	login.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + rd}
	if out, err := login.CombinedOutput(); err != nil {
		t.Fatalf("ccload login: %v\n%s", err, out)
	}
	return &accountRig{mock: m, backend: backend, base: "http://" + startServe(t, bin, file, filepath.Join(rd, "serve.log")), dir: rd}
}

// accountCells runs a text and a tool turn of the named client through
// the account channel.
func accountCells(t *testing.T, name string, websockets bool) {
	dir := os.Getenv("CCLOAD_CLIENTS_DIR")
	if dir == "" {
		t.Fatal("CCLOAD_CLIENTS_DIR is not set: run `make test-clients`, or clients/install.sh and set it to the directory it prints")
	}
	rg := newAccountRig(t, websockets)
	c := clientNamed(name)
	for _, tool := range []bool{false, true} {
		cell := map[bool]string{false: "text", true: "tool"}[tool]
		t.Run(cell, func(t *testing.T) {
			nonce := newNonce(t)
			prompt, want := "Say hello. (ccload-text-"+nonce+")", mockupstream.DefaultText
			if tool {
				prompt = "Run the shell command for ccload-shell-" + nonce + " and report what it printed."
				want = mockupstream.ShellSawPrefix + mockupstream.ShellOutputPrefix + nonce
			}
			before, socketsBefore := rg.backend.Calls("acct-alice"), rg.backend.Sockets()
			out := c.run(t, dir, rg.base, accountToken, prompt, tool)
			reqs := requestsWith(rg.mock, nonce)
			calls := rg.backend.Calls("acct-alice") - before
			sockets := rg.backend.Sockets() - socketsBefore
			fail := out.err != nil || !strings.Contains(out.stdout, want) || len(reqs) == 0 || (tool && calls < 2) ||
				(websockets && sockets == 0)
			for _, bad := range c.badStderr {
				fail = fail || strings.Contains(out.stderr, bad)
			}
			if fail {
				serveLog, _ := os.ReadFile(filepath.Join(rg.dir, "serve.log"))
				all := rg.mock.Requests()
				for _, q := range all[max(0, len(all)-3):] {
					t.Logf("upstream got %s %s: %s", q.Method, q.Path, tail(string(q.Body), 5))
				}
				t.Fatalf("exit %v; stdout lacks %q, a bad stderr line, or too few requests (mock %d, backend answered alice %d, sockets %d)\nstdout:\n%s\nstderr:\n%s\nserve log:\n%s",
					out.err, want, len(reqs), calls, sockets, tail(out.stdout, 20), tail(out.stderr, 30), tail(string(serveLog), 15))
			}
			for _, q := range reqs {
				if strings.Contains(q.Key, accountToken) || strings.Contains(string(q.Body), accountToken) {
					t.Errorf("the client's ccload token reached the upstream (%s %s)", q.Method, q.Path)
				}
			}
		})
	}
}
