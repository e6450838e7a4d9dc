package cmd

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ccload/ccload/admin/adminapi"
)

// TokensOptions are the flags of `ccload tokens`.
type TokensOptions struct {
	IO     IOStreams
	Admin  AdminFlags
	Client func() (*adminapi.Client, error)
	JSON   bool
}

// NewCmdTokens builds `ccload tokens` and its `new` subcommand.
func NewCmdTokens(f *Factory, runF func(*TokensOptions) error) *cobra.Command {
	opts := &TokensOptions{IO: f.IO}
	opts.Client = f.adminClient(&opts.Admin)
	c := &cobra.Command{
		Use:   "tokens [--json] | tokens new NAME",
		Short: "Show client tokens with usage and limits, or add one",
		Long: `Show every client token of the running server: today's requests, errors
and cost (UTC day), lifetime cost against cost_limit, in-flight requests,
requests in the last minute against rpm_limit, expiry and allowed models.
Tokens appear by name and fingerprint only.

Without a terminal the output is one tab-separated line per token:
name, state, requests_today, errors_today, cost_today_usd, cost_used_usd,
cost_limit_usd, in_flight, rpm, rpm_limit, expires (RFC 3339 or empty),
models (comma-separated, empty = all).
--json prints the /admin/tokens answer (admin/API.md).`,
		Example: `  ccload tokens -c ccload.yaml
  ccload tokens new alice --models 'claude-*'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return tokensRun(c.Context(), opts)
		},
	}
	addAdminFlags(c, &opts.Admin)
	c.Flags().BoolVar(&opts.JSON, "json", false, "print JSON (stable, see admin/API.md)")
	c.AddCommand(NewCmdTokensNew(f, nil))
	return c
}

func tokensRun(ctx context.Context, opts *TokensOptions) error {
	cl, err := opts.Client()
	if err != nil {
		return err
	}
	resp, err := cl.Tokens(ctx)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	if opts.JSON {
		return writeJSONOut(opts.IO, resp)
	}
	tty := opts.IO.IsTTY
	var t *table
	if tty {
		t = newTable("NAME", "STATE", "REQ", "ERR", "TODAY", "USED", "LIMIT", "INFL", "RPM", "EXPIRES", "MODELS")
	} else {
		t = newTable("NAME", "STATE", "REQ", "ERR", "TODAY", "USED", "LIMIT", "INFL", "RPM", "RPM_LIMIT", "EXPIRES", "MODELS")
	}
	for _, tk := range resp.Tokens {
		state := "ok"
		if tk.Expired {
			state = "expired"
		}
		models := strings.Join(tk.Models, ",")
		if tty {
			limit, rpm, expires := "-", strconv.Itoa(tk.RPM), "never"
			if tk.CostLimit > 0 {
				limit = fmtCost(tk.CostLimit)
			}
			if tk.RPMLimit > 0 {
				rpm += "/" + strconv.Itoa(tk.RPMLimit)
			}
			if tk.Expires != nil {
				expires = tk.Expires.Format(time.DateOnly)
			}
			if models == "" {
				models = "all"
			}
			t.add(plain(tk.Name), cell{state, stateColor(state)}, plain(fmtCount(tk.Today.Requests)),
				errCell(tk.Today.Errors, tty), plain(fmtCost(tk.Today.Cost)), plain(fmtCost(tk.CostUsed)),
				plain(limit), plain(strconv.FormatInt(tk.InFlight, 10)), plain(rpm), plain(expires),
				plain(strings.ReplaceAll(models, ",", ", ")))
			continue
		}
		expires := ""
		if tk.Expires != nil {
			expires = tk.Expires.UTC().Format(time.RFC3339)
		}
		t.add(plain(tk.Name), plain(state), plain(strconv.FormatInt(tk.Today.Requests, 10)),
			plain(strconv.FormatInt(tk.Today.Errors, 10)), plain(fmtUSD(tk.Today.Cost)), plain(fmtUSD(tk.CostUsed)),
			plain(fmtUSD(tk.CostLimit)), plain(strconv.FormatInt(tk.InFlight, 10)), plain(strconv.Itoa(tk.RPM)),
			plain(strconv.Itoa(tk.RPMLimit)), plain(expires), plain(models))
	}
	return t.print(opts.IO.Out, tty, opts.IO.Color)
}
