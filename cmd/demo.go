package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/ccload/ccload/config"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// demoToken is the client token of the demo entry in ccload.example.yaml
// (stored there only as its sha256).
const demoToken = "sk-ccload-demo"

// DemoOptions are the flags of the hidden `ccload demo` (what `make demo` runs).
type DemoOptions struct {
	IO     IOStreams
	Config string
}

// NewCmdDemo builds `ccload demo`: the mock upstream on 127.0.0.1:9901 and
// `ccload serve` on the example config, in one process.
func NewCmdDemo(f *Factory, runF func(*DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "demo",
		Short: "Serve the example config against a built-in mock upstream",
		Long: `Start the mock upstream (Anthropic, OpenAI Chat, Responses and Gemini on
127.0.0.1:9901) and serve the config against it, in one process, logging
to data/demo.db. The example config (` + "`ccload init`" + `) points every channel
at the mock unless its variables are set, so this is ccload working end to
end without a provider. It prints the addresses, the demo token and curl
lines to try.`,
		Example: `  ccload init && ccload demo -c ccload.yaml
  make demo`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return demoRun(ctx, opts)
		},
	}
	c.Flags().StringVarP(&opts.Config, "config", "c", "ccload.example.yaml", "config file")
	return c
}

func demoRun(ctx context.Context, opts *DemoOptions) error {
	if os.Getenv("CCLOAD_PASS") == "" {
		os.Setenv("CCLOAD_PASS", "demo")
	}
	if os.Getenv("CCLOAD_DB") == "" {
		os.Setenv("CCLOAD_DB", "data/demo.db")
	}
	m := mockupstream.New(mockupstream.Options{MaxRecorded: 1000})
	mockURL, err := m.Start("127.0.0.1:9901")
	if err != nil {
		return &exitError{code: exitFail, err: fmt.Errorf("mock upstream: %w (is another demo running?)", err)}
	}
	defer m.Close()
	acctBase, _, stopAccounts, err := demoAccounts(demoAccountAddr, m)
	if err != nil {
		return &exitError{code: exitFail, err: fmt.Errorf("mock sign-in and Codex backend: %w (is another demo running?)", err)}
	}
	defer stopAccounts()
	file, err := demoAccountConfig(opts.Config, filepath.Dir(os.Getenv("CCLOAD_DB")), acctBase)
	if err != nil {
		return &exitError{code: exitFail, err: fmt.Errorf("demo account channel: %w", err)}
	}
	// A config with oauth channels of its own is served as it is: its
	// accounts are the user's to sign in.
	signedIn := "the config has oauth channels of its own: no demo account added"
	if file != opts.Config {
		if signedIn, err = demoSignIn(ctx, file); err != nil {
			return &exitError{code: exitFail, err: fmt.Errorf("demo account sign-in: %w", err)}
		}
	}
	return serveRun(ctx, &ServeOptions{
		IO: opts.IO, Config: file, Grace: 5 * time.Second, AllowDemoToken: true,
		Ready: func(addr string) {
			w := opts.IO.Out
			fmt.Fprintf(w, "\nccload demo: gateway on http://%s, mock upstream on %s\n", addr, mockURL)
			fmt.Fprintf(w, "dashboard/admin password: %s    client token: %s\n\n", os.Getenv("CCLOAD_PASS"), demoToken)
			fmt.Fprintf(w, "Try (Anthropic Messages, streamed):\n  curl -N http://%s/v1/messages -H 'x-api-key: %s' -H 'anthropic-version: 2023-06-01' \\\n"+
				"    -H 'content-type: application/json' \\\n    -d '{\"model\":\"claude-sonnet-4-6\",\"max_tokens\":64,\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}'\n\n", addr, demoToken)
			fmt.Fprintf(w, "Or OpenAI Chat:\n  curl http://%s/v1/chat/completions -H 'Authorization: Bearer %s' -H 'content-type: application/json' \\\n"+
				"    -d '{\"model\":\"gpt-5\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}'\n\n", addr, demoToken)
			fmt.Fprintf(w, "Or a subscription account, through the mock ChatGPT sign-in and Codex backend on %s:\n  %s\n"+
				"  curl http://%s/v1/responses -H 'Authorization: Bearer %s' -H 'content-type: application/json' \\\n"+
				"    -d '{\"model\":\"%s\",\"input\":\"Hello\"}'\n  CCLOAD_DB=%s ccload accounts -c %s\n\n",
				acctBase, signedIn, addr, demoToken, demoAccountModel, os.Getenv("CCLOAD_DB"), file)
			fmt.Fprintf(w, "Health: curl http://%s/health     Stop: Ctrl-C\n\n", addr)
		},
	})
}

// demoTokenIn reports the name of the token of snap that accepts the
// public demo token, if any.
func demoTokenIn(snap *config.Snapshot) (string, bool) {
	sum := sha256.Sum256([]byte(demoToken))
	if t := snap.TokenBySHA256(hex.EncodeToString(sum[:])); t != nil {
		return t.Name, true
	}
	return "", false
}
