package cmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// MockOptions are the flags of the hidden `ccload mock-upstream`.
type MockOptions struct {
	IO     IOStreams
	Listen string
}

// NewCmdMockUpstream builds `ccload mock-upstream`: a local upstream that
// speaks all four protocols, for the demo, tests and benchmarks.
func NewCmdMockUpstream(f *Factory, runF func(*MockOptions) error) *cobra.Command {
	opts := &MockOptions{IO: f.IO}
	c := &cobra.Command{
		Use:    "mock-upstream [--listen ADDR]",
		Short:  "Run a mock upstream speaking Anthropic, OpenAI Chat, Responses and Gemini",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return mockRun(ctx, opts)
		},
	}
	c.Flags().StringVar(&opts.Listen, "listen", "127.0.0.1:9901", "listen address")
	return c
}

func mockRun(ctx context.Context, opts *MockOptions) error {
	m := mockupstream.New(mockupstream.Options{MaxRecorded: 1000})
	url, err := m.Start(opts.Listen)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	fmt.Fprintf(opts.IO.Err, "mock upstream listening on %s\n", url)
	<-ctx.Done()
	return m.Close()
}
