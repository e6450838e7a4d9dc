//go:build clients

package clients

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// runTimeout bounds one CLI run; a hung client fails its cell, not the CI.
const runTimeout = 4 * time.Minute

// client is one agent CLI in one mode: how to run it against a ccload base
// URL with a token, in an isolated home.
type client struct {
	name    string // subtest and table name
	bin     string // file in node_modules/.bin
	pkg     string // npm package, for its version
	model   string // the model it is run with ("" = its default)
	prepare func(home, base, token string) (env []string, err error)
	args    func(c *client, dir, prompt string, tool bool) []string
	// families, when set, are the only upstream families it is run with.
	families []string
	// badStderr are lines whose presence on stderr fails the cell.
	badStderr []string
}

var clients = []*client{
	{name: "claude-code", bin: "claude", pkg: "@anthropic-ai/claude-code", prepare: claudeEnv, args: claudeArgs},
	{name: "codex", bin: "codex", pkg: "@openai/codex", model: "gpt-5-codex", prepare: codexEnv, args: codexArgs},
	{name: "codex-code-mode", bin: "codex", pkg: "@openai/codex", model: "gpt-6.2-sol", prepare: codexEnv, args: codexArgs},
	// Codex over the Responses WebSocket transport: no fallback
	// to HTTPS may happen.
	{name: "codex-ws", bin: "codex", pkg: "@openai/codex", model: "gpt-5-codex", prepare: codexWSEnv, args: codexArgs,
		families:  []string{mockupstream.Responses, mockupstream.Anthropic},
		badStderr: []string{"Falling back from WebSockets", "failed to connect to Responses WebSocket"}},
	{name: "gemini-cli", bin: "gemini", pkg: "@google/gemini-cli", prepare: geminiEnv, args: geminiArgs},
}

// claudeEnv: Claude Code talks to ANTHROPIC_BASE_URL with the token as a
// Bearer credential; nothing non-essential leaves the machine, and a failed
// request is retried once at most.
func claudeEnv(home, base, token string) ([]string, error) {
	return []string{
		"ANTHROPIC_BASE_URL=" + base,
		"ANTHROPIC_AUTH_TOKEN=" + token,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_MAX_RETRIES=1",
	}, nil
}

func claudeArgs(_ *client, _ string, prompt string, tool bool) []string {
	a := []string{"-p", prompt, "--output-format", "text"}
	if tool {
		a = append(a, "--allowedTools", "Bash")
	}
	return a
}

// codexEnv writes $CODEX_HOME/config.toml with ccload as the model
// provider (Responses wire API, token from CCLOAD_TOKEN), retries capped,
// plugins and analytics off.
func codexEnv(home, base, token string) ([]string, error) {
	return writeCodexConfig(home, base, token, "")
}

// codexWSEnv is codexEnv with the provider's supports_websockets on.
func codexWSEnv(home, base, token string) ([]string, error) {
	return writeCodexConfig(home, base, token, "supports_websockets = true\n")
}

func writeCodexConfig(home, base, token, extra string) ([]string, error) {
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		return nil, err
	}
	cfg := fmt.Sprintf(`model_provider = "ccload"
check_for_update_on_startup = false

[model_providers.ccload]
name = "ccload"
base_url = "%s/v1"
env_key = "CCLOAD_TOKEN"
wire_api = "responses"
request_max_retries = 1
stream_max_retries = 1
%s
[features]
plugins = false

[analytics]
enabled = false
`, base, extra)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	return []string{"CODEX_HOME=" + codexHome, "CCLOAD_TOKEN=" + token}, nil
}

// codexArgs: `codex exec` in the work dir, outside git, leaving no session
// behind; the sandbox is off because the test box may lack the namespaces
// bubblewrap needs, and the command the mock asks for only prints.
func codexArgs(c *client, dir, prompt string, _ bool) []string {
	return []string{"exec", "--skip-git-repo-check", "--ephemeral", "--color", "never",
		"--dangerously-bypass-approvals-and-sandbox", "-m", c.model, "-C", dir, prompt}
}

// geminiEnv writes ~/.gemini/settings.json choosing API-key auth with
// telemetry and usage statistics off, and points the CLI at ccload.
func geminiEnv(home, base, token string) ([]string, error) {
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	settings := `{"security":{"auth":{"selectedType":"gemini-api-key"}},` +
		`"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},` +
		`"general":{"disableAutoUpdate":true,"disableUpdateNag":true}}`
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o600); err != nil {
		return nil, err
	}
	return []string{
		"GOOGLE_GEMINI_BASE_URL=" + base,
		"GEMINI_API_KEY=" + token,
		"GEMINI_CLI_TRUST_WORKSPACE=true",
	}, nil
}

func geminiArgs(_ *client, _ string, prompt string, tool bool) []string {
	a := []string{"-p", prompt, "--output-format", "text"}
	if tool {
		a = append(a, "--approval-mode", "yolo")
	}
	return a
}

// runResult is what one CLI run left behind.
type runResult struct {
	stdout, stderr string
	err            error
}

// run starts the CLI in a fresh home and work dir with stdin closed and
// only the environment it needs (nothing of the caller's credentials), and
// kills its whole process group at the deadline.
func (c *client) run(t *testing.T, clientsDir, base, token, prompt string, tool bool) runResult {
	t.Helper()
	home := t.TempDir()
	work := filepath.Join(home, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	extra, err := c.prepare(home, base, token)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(clientsDir, "node_modules", ".bin", c.bin), c.args(c, work, prompt, tool)...)
	cmd.Dir = work
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "USER=ccload", "TMPDIR=" + home,
		"LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1", "CI=1",
	}, extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it left running; usually nothing
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %s: %w", runTimeout, err)
	}
	return runResult{stdout: out.String(), stderr: errb.String(), err: err}
}

// tail returns the last n lines of s, for failure messages.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"…"}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
