package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ccload/ccload/importer"
)

// ImportOptions are the flags of `ccload import`.
type ImportOptions struct {
	IO          IOStreams
	File        string // input; "-" reads stdin
	Output      string // -o; "" or "-" writes to stdout
	Format      string // "" detects from the content
	WithSecrets bool   // literal keys may reach the terminal
	EnvKeys     bool   // write ${CHANNEL_KEY_N} references instead of literal keys
	Force       bool   // overwrite an existing -o file
}

// NewCmdImport builds `ccload import`.
func NewCmdImport(f *Factory, runF func(*ImportOptions) error) *cobra.Command {
	opts := &ImportOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "import FILE [-o ccload.yaml] [--format ccload-csv|litellm]",
		Short: "Convert a ccLoad CSV channel export or a LiteLLM config.yaml into ccload YAML",
		Long: `Convert another gateway's configuration into a complete ccload config file.

FILE is a ccLoad channel CSV export (English or Chinese column names) or a
LiteLLM proxy config.yaml; the format is detected from the content, or set
with --format. FILE "-" reads standard input. Whatever cannot be carried
over is listed in comments in the output, where it applies.

Keys never reach the terminal unless --with-secrets is given:
  -o FILE            literal keys from the input are written to FILE only
                     (mode 0600), with a warning.
  no -o              the YAML goes to stdout with each literal key replaced
                     by a ${CHANNEL_KEY_N} reference.
  --env-keys         references in the file too; with --with-secrets the
                     matching export lines are printed (to stdout with -o,
                     else to stderr).

Exit status: 0 converted, 1 unreadable or invalid input (or -o exists
without --force), 2 usage error.`,
		Example: `  ccload import channels.csv -o ccload.yaml
  ccload import litellm/config.yaml > ccload.yaml
  ccload import channels.csv -o ccload.yaml --env-keys --with-secrets > keys.env`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.File = args[0]
			if opts.Format != "" && !slices.Contains(importer.Formats, importer.Format(opts.Format)) {
				return &exitError{code: exitUsage, err: fmt.Errorf("ccload import: --format %q: want ccload-csv or litellm", opts.Format)}
			}
			if runF != nil {
				return runF(opts)
			}
			return importRun(opts)
		},
	}
	c.Flags().StringVarP(&opts.Output, "output", "o", "", "write the config to this file (default: stdout)")
	c.Flags().StringVar(&opts.Format, "format", "", "input format: ccload-csv or litellm (default: detect)")
	c.Flags().BoolVar(&opts.WithSecrets, "with-secrets", false, "allow literal keys on the terminal")
	c.Flags().BoolVar(&opts.EnvKeys, "env-keys", false, "write ${CHANNEL_KEY_N} references instead of literal keys")
	c.Flags().BoolVar(&opts.Force, "force", false, "overwrite the -o file if it exists")
	return c
}

func importRun(opts *ImportOptions) error {
	fail := func(format string, args ...any) error {
		return &exitError{code: exitFail, err: fmt.Errorf("ccload import: "+format, args...)}
	}
	data, source, err := readImportInput(opts)
	if err != nil {
		return fail("%v", err)
	}
	cfg, err := importer.Read(data, importer.Format(opts.Format))
	if err != nil {
		return fail("%s: %v", source, err)
	}
	toFile := opts.Output != "" && opts.Output != "-"
	if toFile && opts.File != "-" && isSameFile(opts.File, opts.Output) {
		return fail("%s is the input file; choose another -o", opts.Output)
	}
	// Literal keys go to a file the operator chose, or to the terminal only
	// with --with-secrets; everywhere else they become references.
	mode := importer.KeepSecrets
	if opts.EnvKeys || !toFile && !opts.WithSecrets {
		mode = importer.EnvSecrets
	}
	res, err := importer.Render(cfg, source, mode)
	if err != nil {
		return fail("%v", err)
	}
	outName := "stdout"
	if toFile {
		outName = opts.Output
	}
	// Never hand over a file `ccload check` would reject. The loader's
	// messages name keys by position, never by value.
	if err := importer.Validate(outName, res.YAML); err != nil {
		return fail("the converted config does not pass the config check (a bug in the importer):\n%v", err)
	}
	if toFile {
		if err := writeImportFile(opts.Output, res.YAML, opts.Force); err != nil {
			return fail("%v", err)
		}
	} else if _, err := opts.IO.Out.Write(res.YAML); err != nil {
		return fail("%v", err)
	}
	importReport(opts, cfg, res, source, outName, toFile)
	return nil
}

// readImportInput reads FILE, or stdin for "-", and names it for comments.
func readImportInput(opts *ImportOptions) ([]byte, string, error) {
	if opts.File == "-" {
		if opts.IO.In == nil {
			return nil, "", errors.New("no standard input")
		}
		data, err := io.ReadAll(opts.IO.In)
		return data, "stdin", err
	}
	data, err := os.ReadFile(opts.File)
	return data, filepath.Base(opts.File), err
}

// importReport tells on stderr what happened and what to do next; export
// lines with key values are printed only with --env-keys --with-secrets.
func importReport(opts *ImportOptions, cfg *importer.Config, res *importer.Result, source, outName string, toFile bool) {
	w := opts.IO.Err
	disabled, notes := 0, len(cfg.Notes)
	for _, ch := range cfg.Channels {
		if ch.Disabled {
			disabled++
		}
		notes += len(ch.Notes)
	}
	fmt.Fprintf(w, "imported %s (%d disabled) from %s (%s) to %s\n", importCount(len(cfg.Channels), "channel"), disabled, source, cfg.Format, outName)
	if notes > 0 {
		fmt.Fprintf(w, "%s not carried over; comments in the output say which and why\n", importCount(notes, "setting"))
	}
	switch {
	case res.Literals > 0 && toFile:
		fmt.Fprintf(w, "warning: %s written to %s (mode 0600); keep it out of git,\n", importCount(res.Literals, "literal key"), outName)
		fmt.Fprintln(w, "  or rerun with --env-keys to write ${VAR} references instead")
	case res.Literals > 0:
		fmt.Fprintf(w, "warning: %s printed (--with-secrets)\n", importCount(res.Literals, "literal key"))
	}
	switch {
	case len(res.Env) == 0:
	case !opts.EnvKeys:
		fmt.Fprintf(w, "warning: %s replaced by ${..._KEY_N} references and not printed;\n", importCount(len(res.Env), "literal key"))
		fmt.Fprintln(w, "  write them to a file with -o FILE, or print export lines with --env-keys --with-secrets")
	case !opts.WithSecrets:
		fmt.Fprintf(w, "%s replaced by ${..._KEY_N} references;\n", importCount(len(res.Env), "literal key"))
		fmt.Fprintln(w, "  rerun with --with-secrets to print their export lines")
	default:
		out := w
		if toFile {
			out = opts.IO.Out
		}
		for _, e := range res.Env {
			fmt.Fprintln(out, exportLine(e.Name, e.Value))
		}
	}
	if vars := importer.Vars(res.YAML); len(vars) > 0 {
		fmt.Fprintln(w, "set these variables before check or serve:")
		line := " "
		for _, v := range vars {
			if len(line)+1+len(v) > 100 {
				fmt.Fprintln(w, line)
				line = " "
			}
			line += " " + v
		}
		fmt.Fprintln(w, line)
	}
	if toFile {
		fmt.Fprintf(w, "next: ccload check --offline -c %s\n", outName)
	}
}

// writeImportFile writes data to path with mode 0600 (it may hold keys),
// refusing to replace an existing file unless force.
func writeImportFile(path string, data []byte, force bool) error {
	flag := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists; use --force to overwrite it", path)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && force {
		err = f.Chmod(0o600) // an old file kept its mode; this one may hold keys
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// isSameFile reports whether a and b name one existing file.
func isSameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// importCount is "1 key" or "2 keys".
func importCount(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// exportLine is a POSIX shell line setting name to value.
func exportLine(name, value string) string {
	return "export " + name + "='" + strings.ReplaceAll(value, "'", `'\''`) + "'"
}
