package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"
)

// InitOptions are the arguments of `ccload init`.
type InitOptions struct {
	IO    IOStreams
	File  string
	Force bool
	// Example is the starter config: ccload.example.yaml as embedded in the
	// binary, so an installed ccload needs no checkout to start from.
	Example []byte
}

// NewCmdInit builds `ccload init [FILE]`.
func NewCmdInit(f *Factory, runF func(*InitOptions) error) *cobra.Command {
	opts := &InitOptions{IO: f.IO, Example: f.Build.ExampleConfig}
	c := &cobra.Command{
		Use:   "init [FILE]",
		Short: "Write a commented starter config (default ccload.yaml)",
		Long: `Write the commented example config, the same as ccload.example.yaml in
the repository, to FILE (default ccload.yaml). It passes
` + "`ccload check --offline`" + ` as it is: its channels point at the built-in mock
upstream until you set their URLs and keys (or the environment variables
the file names). An existing FILE is kept unless --force. FILE "-"
prints it to standard output instead, to read what a binary or a
container image carries.`,
		Example: `  ccload init
  ccload init /etc/ccload/ccload.yaml --force
  ccload init - | less`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.File = defaultConfig
			if len(args) == 1 {
				opts.File = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return initRun(opts)
		},
	}
	c.Flags().BoolVarP(&opts.Force, "force", "f", false, "overwrite FILE if it exists")
	return c
}

func initRun(opts *InitOptions) error {
	if len(opts.Example) == 0 {
		return &exitError{code: exitFail, err: errors.New("init: this binary was built without its example config")}
	}
	if opts.File == "-" {
		_, err := opts.IO.Out.Write(opts.Example)
		return err
	}
	_, err := os.Lstat(opts.File)
	switch {
	case err == nil && !opts.Force:
		return &exitError{code: exitFail, err: fmt.Errorf("init: %s exists; keep it, or overwrite it with --force", opts.File)}
	case err == nil:
		// Replace through a temporary file: a server watching it never
		// reads half a file.
		err = writeFileAtomic(opts.File, opts.Example)
	case errors.Is(err, fs.ErrNotExist):
		err = writeNew(opts.File, opts.Example)
	}
	if err != nil {
		return &exitError{code: exitFail, err: fmt.Errorf("init: %w", err)}
	}
	fmt.Fprintf(opts.IO.Out, `wrote %[1]s: a commented starter config. It works as it is against the
built-in mock upstream; set the channels' URLs and keys (or the variables
it names) for real providers, and delete the demo token.

Next:
  ccload check --offline -c %[1]s     validate it
  ccload demo -c %[1]s                try it against the mock upstream (port 9901)
  ccload tokens new NAME -c %[1]s     create a client token
  CCLOAD_PASS=... ccload serve -c %[1]s
`, opts.File)
	return nil
}

// writeNew creates file with data, failing if it appeared meanwhile. The
// mode is 0600: the file is meant to receive keys.
func writeNew(file string, data []byte) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
