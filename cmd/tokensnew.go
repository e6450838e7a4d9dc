package cmd

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ccload/ccload/config"
)

// TokensNewOptions are the flags of `ccload tokens new`.
type TokensNewOptions struct {
	IO     IOStreams
	Config string
	Name   string
	Models []string
	Rand   io.Reader // nil = crypto/rand
}

// NewCmdTokensNew builds `ccload tokens new`.
func NewCmdTokensNew(f *Factory, runF func(*TokensNewOptions) error) *cobra.Command {
	opts := &TokensNewOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "new NAME [--models a,b] [-c FILE]",
		Short: "Create a client token and add its sha256 to the config file",
		Long: `Create a random client token, print it once on stdout, and append
{name: NAME, token_sha256: ...} (with --models, the model globs) to the
tokens: list of the config file. The token itself is written nowhere: keep
it now, it cannot be shown again.

Everything else in the file (comments, order, quoting, blank lines) stays as
it is; a running server picks the new token up on its next reload (it
watches the file).`,
		Example: `  ccload tokens new alice
  ccload tokens new ci --models 'claude-*,gpt-5*' -c /etc/ccload/ccload.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return tokensNewRun(opts)
		},
	}
	c.Flags().StringVarP(&opts.Config, "config", "c", defaultConfig, "config file to add the token to")
	c.Flags().StringSliceVar(&opts.Models, "models", nil, "model globs the token may use (default: all)")
	return c
}

// tokenPrefix and tokenChars make tokens like sk-ccload-<32 base62>, about
// 190 bits of randomness.
const (
	tokenPrefix = "sk-ccload-"
	tokenChars  = 32
	base62      = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// newToken draws a token from r without modulo bias.
func newToken(r io.Reader) (string, error) {
	out := make([]byte, 0, len(tokenPrefix)+tokenChars)
	out = append(out, tokenPrefix...)
	var buf [64]byte
	for len(out) < cap(out) {
		if _, err := io.ReadFull(r, buf[:]); err != nil {
			return "", err
		}
		for _, b := range buf {
			if b < 248 && len(out) < cap(out) { // 248 = 4 * 62
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out), nil
}

func tokensNewRun(opts *TokensNewOptions) error {
	if err := checkTokenName(opts.Name); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	for _, m := range opts.Models {
		if _, err := path.Match(m, ""); err != nil || m == "" {
			return &exitError{code: exitUsage, err: fmt.Errorf("--models: invalid glob %q (path.Match syntax: *, ?, [a-z])", m)}
		}
	}
	file, err := filepath.EvalSymlinks(opts.Config) // replace the target of a symlinked file
	if err != nil {
		return &exitError{code: exitFail, err: fmt.Errorf("config: %w", err)}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return &exitError{code: exitFail, err: fmt.Errorf("config: %w", err)}
	}
	rnd := opts.Rand
	if rnd == nil {
		rnd = rand.Reader
	}
	token, err := newToken(rnd)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	sum := sha256.Sum256([]byte(token))
	out, reformatted, err := config.AddToken(data, config.NewToken{Name: opts.Name, SHA256: hex.EncodeToString(sum[:]), Models: opts.Models})
	if err != nil {
		return &exitError{code: exitFail, err: fmt.Errorf("%s: %w", opts.Config, err)}
	}
	if err := writeFileAtomic(file, out); err != nil {
		return &exitError{code: exitFail, err: err}
	}
	fmt.Fprintln(opts.IO.Out, token)
	if reformatted {
		fmt.Fprintf(opts.IO.Err, "note: %s could not be edited in place and was re-written by the YAML encoder; comments are kept, blank lines and quoting may differ\n", opts.Config)
	}
	fmt.Fprintf(opts.IO.Err, "added token %q to %s (only its sha256 is stored). This is the only time the token is shown.\n", opts.Name, opts.Config)
	return nil
}

func checkTokenName(name string) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("token name is empty")
	}
	for _, r := range name {
		if r < ' ' || r == 0x7f {
			return fmt.Errorf("token name %q has control characters", name)
		}
	}
	return nil
}

// writeFileAtomic replaces file with data through a temporary file in the
// same directory, keeping the file's mode, so a watcher never reads half.
func writeFileAtomic(file string, data []byte) error {
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
