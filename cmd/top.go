package cmd

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/tui"
)

// TopOptions are the flags of `ccload top`.
type TopOptions struct {
	IO     IOStreams
	Admin  AdminFlags
	Client func() (*adminapi.Client, error)
}

// NewCmdTop builds `ccload top`.
func NewCmdTop(f *Factory, runF func(*TopOptions) error) *cobra.Command {
	opts := &TopOptions{IO: f.IO}
	opts.Client = f.adminClient(&opts.Admin)
	c := &cobra.Command{
		Use:   "top",
		Short: "Watch the running server live: requests in flight, finished requests, channels",
		Long: `Show a full-screen live view of the running server, fed by the admin
event stream (/admin/events) and refreshed every second.

The header shows uptime, the config status (with the last reload error),
requests/s, error rate and output tokens/s over the last minute, and
today's cost. Below are the requests in flight, the latest finished
requests (OK or FAIL, with the failure scope) and the channels with their
cooldowns counting down.

Keys: s sort, / filter by channel or model, p pause, tab switch pane,
? help, q quit. When the server restarts, top reconnects by itself.
Colour follows the terminal and NO_COLOR.`,
		Example: `  ccload top -c ccload.yaml
  CCLOAD_SERVER=http://10.0.0.5:8080 CCLOAD_PASS=secret ccload top`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return topRun(c.Context(), opts)
		},
	}
	addAdminFlags(c, &opts.Admin)
	return c
}

func topRun(ctx context.Context, opts *TopOptions) error {
	if !opts.IO.IsTTY {
		return &exitError{code: exitUsage, err: errors.New(
			"ccload top needs a terminal; for a stream of lines use `ccload logs -f`")}
	}
	cl, err := opts.Client()
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := tui.Run(ctx, cl, tui.Options{Color: opts.IO.Color}); err != nil {
		return &exitError{code: exitFail, err: err}
	}
	return nil
}
