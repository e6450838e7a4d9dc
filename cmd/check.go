package cmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"ccload/config"
)

// CheckOptions are the flags of `ccload check`.
type CheckOptions struct {
	IO      IOStreams
	Config  string
	Offline bool
}

// NewCmdCheck builds `ccload check`.
func NewCmdCheck(f *Factory, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "check -c FILE [--offline]",
		Short: "Validate a config file (and, unless --offline, probe every channel)",
		Long: `Validate the config file and print every problem as file:line:col: message.
Exit status: 0 valid, 1 invalid, 2 usage error.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return checkRun(opts)
		},
	}
	c.Flags().StringVarP(&opts.Config, "config", "c", "ccload.yaml", "config file")
	c.Flags().BoolVar(&opts.Offline, "offline", false, "validate only, send no request")
	return c
}

func checkRun(opts *CheckOptions) error {
	snap, err := config.Load(opts.Config)
	if err != nil {
		var probs config.Problems
		if errors.As(err, &probs) {
			fmt.Fprintln(opts.IO.Err, probs.Error())
			fmt.Fprintf(opts.IO.Err, "%s: %d problem(s)\n", opts.Config, len(probs))
			return &exitError{code: exitFail, err: errors.New("")}
		}
		return &exitError{code: exitFail, err: err}
	}
	if !opts.Offline {
		// Live probes of every channel are not built yet; say so rather
		// than pretend the channels were checked.
		fmt.Fprintln(opts.IO.Err, "note: live channel probes are not implemented yet; only the file was validated (same as --offline)")
	}
	models := 0
	for _, ch := range snap.Channels {
		models += len(ch.Models)
	}
	fmt.Fprintf(opts.IO.Out, "%s: ok (%d channels, %d models, %d tokens)\n", opts.Config, len(snap.Channels), models, len(snap.Tokens))
	return nil
}
