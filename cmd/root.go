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
}

// Factory carries what commands need, built lazily.
type Factory struct {
	IO IOStreams
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
		Use:           "ccload",
		Short:         "One AI API gateway in front of Claude Code, Codex, Gemini CLI and OpenAI clients",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.Err)
	root.AddCommand(NewCmdServe(f, nil), NewCmdCheck(f, nil), NewCmdMockUpstream(f, nil), NewCmdDemo(f, nil))
	return root
}

// Execute runs ccload with os.Args and returns the process exit code.
func Execute() int {
	f := &Factory{IO: IOStreams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}}
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
