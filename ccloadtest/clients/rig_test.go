//go:build clients

package clients

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// families are the four upstream families, in table order; each has a
// channel of that name speaking only that protocol, and a client token
// allowed on that channel alone, so a run's token picks its family.
var families = []string{mockupstream.Anthropic, mockupstream.OpenAI, mockupstream.Responses, mockupstream.Gemini}

// models are the names the CLIs ask for: their defaults, the ones the test
// selects, and the small models they use on the side.
var models = []string{
	"claude-opus-4-8", "claude-sonnet-4-6", "claude-haiku-4-5", "claude-haiku-4-5-20251001",
	"gpt-5-codex", "gpt-6.2-sol",
	"gemini-3.5-flash-lite", "gemini-3.8-flash", "gemini-3.5-flash", "gemini-3.1-pro-preview",
	"gemini-3.1-pro-preview-customtools", "gemini-3-flash-preview", "gemini-3-pro-preview",
	"gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-2.5-pro",
}

// rig is one mock upstream and one `ccload serve` in front of it.
type rig struct {
	mock *mockupstream.Server
	base string // http://127.0.0.1:PORT of ccload
	dir  string // temp dir of the rig (config, database, log)
}

// upstreamKey is the key ccload sends to the mock for a family's channel.
func upstreamKey(family string) string { return "mock-upstream-key-" + family }

// clientToken is the ccload token a client uses to reach a family.
func clientToken(family string) string { return "sk-ccload-clients-" + family + "-0123456789" }

// newRig starts the mock (every request under the "shell" scenario) and
// the built ccload binary with one channel and token per family.
func newRig(t *testing.T, bin string) *rig {
	t.Helper()
	m := mockupstream.New(mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		r.Header.Set(mockupstream.ScenarioHeader, "shell")
		return mockupstream.DefaultReply(r)
	}})
	mockURL, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })

	dir := t.TempDir()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "version: 1\nserver: {listen: \"127.0.0.1:0\", admin_password: clients-test}\n")
	fmt.Fprintf(&cfg, "storage: {driver: sqlite, dsn: %q}\n", filepath.Join(dir, "ccload.db"))
	fmt.Fprintf(&cfg, "routing: {max_attempts: 1}\nchannels:\n")
	for _, f := range families {
		fmt.Fprintf(&cfg, "  - name: %s\n    urls: [{url: %q, protocols: [%s]}]\n    keys: [%s]\n    models: [%s]\n",
			f, mockURL, f, upstreamKey(f), strings.Join(models, ", "))
	}
	fmt.Fprintf(&cfg, "tokens:\n")
	for _, f := range families {
		sum := sha256.Sum256([]byte(clientToken(f)))
		fmt.Fprintf(&cfg, "  - {name: via-%s, token_sha256: %s, channels: {allow: [%s]}}\n", f, hex.EncodeToString(sum[:]), f)
	}
	file := filepath.Join(dir, "ccload.yaml")
	if err := os.WriteFile(file, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return &rig{mock: m, base: "http://" + startServe(t, bin, file, filepath.Join(dir, "serve.log")), dir: dir}
}

var servingAddr = regexp.MustCompile(`msg="ccload serving" addr=(127\.0\.0\.1:\d+)[ \n]`)

// startServe runs `ccload serve -c file`, logging to logPath, and returns
// the address it listens on (read from its start-up log line).
func startServe(t *testing.T, bin, file, logPath string) string {
	t.Helper()
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	cmd := exec.Command(bin, "serve", "-c", file)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(file)}
	cmd.Stdout = logf
	cmd.Stderr = &addrWatcher{w: logf, addr: addr}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logf.Close()
	})
	select {
	case a := <-addr:
		return a
	case <-exited:
		b, _ := os.ReadFile(logPath)
		t.Fatalf("ccload serve exited before serving:\n%s", b)
	case <-time.After(2 * time.Minute):
		t.Fatal("ccload serve did not report its address within 2 minutes")
	}
	return ""
}

// addrWatcher passes serve's log through to w and sends the address of its
// start-up line on addr, once.
type addrWatcher struct {
	w    io.Writer
	addr chan<- string
	mu   sync.Mutex
	line []byte
	sent bool
}

func (a *addrWatcher) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.sent {
		a.line = append(a.line, p...)
		if m := servingAddr.FindSubmatch(a.line); m != nil {
			a.addr <- string(m[1])
			a.sent, a.line = true, nil
		} else if i := strings.LastIndexByte(string(a.line), '\n'); i >= 0 {
			a.line = a.line[i+1:]
		}
	}
	return a.w.Write(p)
}

// buildCcload returns CCLOAD_BIN, or builds ccload into a temp dir.
func buildCcload(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("CCLOAD_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	bin := filepath.Join(t.TempDir(), "ccload")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/ccload/ccload").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ccload: %v\n%s", err, out)
	}
	return bin
}
