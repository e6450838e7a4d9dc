// Package cmd holds ccload's command line: one file per command, each built
// as NewCmdX(f, runF) with the behaviour in xRun so tests can drive it
// without cobra.
package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes (design §3): 0 ok, 1 invalid file or failed probe, 2 usage.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// IOStreams are a command's standard streams.
type IOStreams struct {
	In       io.Reader
	Out, Err io.Writer
	// IsTTY is true when Out is a terminal: human output is then an aligned
	// table, otherwise tab-separated lines (STYLE practice 17).
	IsTTY bool
	// Color allows ANSI colour on Out: a terminal, NO_COLOR unset and TERM
	// not "dumb".
	Color bool
}

// Factory carries what commands need, built lazily.
type Factory struct {
	IO IOStreams
	// LookupEnv reads the environment (CCLOAD_SERVER, CCLOAD_PASS and the
	// config's ${VAR}s); nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Build is the version stamp and embedded example config from main.
	Build Build
}

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// NewRootCmd builds the ccload command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "ccload <command> [flags]",
		Short: "One AI API gateway in front of Claude Code, Codex, Gemini CLI and OpenAI clients",
		Long: `ccload routes the requests of Claude Code, Codex CLI, Gemini CLI and
OpenAI clients to healthy upstream channels, in the client's own protocol,
converting when a channel speaks another one. Channels (URLs, keys,
models) and client tokens live in one YAML file; every request is logged
with its cost.

Start with ` + "`ccload init`" + ` (a commented config) and ` + "`ccload demo`" + ` (that config
against a built-in mock upstream); docs: https://github.com/ccload/ccload#documentation`,
		Example: `  ccload init
  ccload check --offline -c ccload.yaml
  CCLOAD_PASS=secret ccload serve -c ccload.yaml
  ccload top -c ccload.yaml
  ccload completion bash > ~/.local/share/bash-completion/completions/ccload`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// --version prints what `ccload version` prints.
	v := f.version()
	root.Version = v.Version
	root.Annotations = map[string]string{"version": v.String()}
	root.SetVersionTemplate("{{with .Annotations}}{{.version}}{{end}}")
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.Err)
	root.AddCommand(NewCmdServe(f, nil), NewCmdCheck(f, nil), NewCmdMockUpstream(f, nil), NewCmdDemo(f, nil))
	root.AddCommand(NewCmdLogs(f, nil), NewCmdChannels(f, nil), NewCmdTokens(f, nil), NewCmdImport(f, nil), NewCmdTop(f, nil))
	root.AddCommand(NewCmdInit(f, nil), NewCmdVersion(f))
	root.AddCommand(NewCmdLogin(f, nil), NewCmdLogout(f, nil), NewCmdAccounts(f, nil))
	return root
}

// Execute runs ccload with os.Args and returns the process exit code.
func Execute(b Build) int {
	tty := isTerminal(os.Stdout)
	f := &Factory{IO: IOStreams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, IsTTY: tty,
		Color: tty && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"}, Build: b}
	root := NewRootCmd(f)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(f.IO.Err, ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(f.IO.Err, "ccload:", err)
	// cobra's own errors (unknown flag, missing argument) are usage errors.
	return exitUsage
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
