package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ccload/ccload/engine/account"
)

// AccountsOptions are the flags of `ccload accounts`.
type AccountsOptions struct {
	IO        IOStreams
	LookupEnv func(string) (string, bool)
	Config    string
	JSON      bool
	Now       func() time.Time
}

// NewCmdAccounts builds `ccload accounts`.
func NewCmdAccounts(f *Factory, runF func(*AccountsOptions) error) *cobra.Command {
	opts := &AccountsOptions{IO: f.IO, LookupEnv: f.LookupEnv}
	c := &cobra.Command{
		Use:   "accounts [--json]",
		Short: "Show the subscription accounts of oauth channels: state, token expiry, quota windows",
		Long: `Show every account the config's oauth channels name, read from the
database (no server needed): its state (ok; exhausted until its quota
resets; invalid, with the provider's reason; signed_out; undecryptable,
when server.secret_key changed), access-token expiry, last refresh and
the quota windows the provider last reported, and the requests it served
today with their cost. Credentials never appear:
the provider's account id is shown as a fingerprint.

Without a terminal the output is one tab-separated line per account:
channel, account, provider, state, reason, access_expires, last_refresh,
primary used %, primary resets_at, secondary used %, secondary resets_at,
requests today, cost today (USD; the day starts 00:00 UTC).
--json prints a list of objects (docs/accounts.md).`,
		Example: `  ccload accounts
  ccload accounts --json -c /etc/ccload/ccload.yaml`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return accountsRun(c.Context(), opts)
		},
	}
	c.Flags().StringVarP(&opts.Config, "config", "c", "ccload.yaml", "config file")
	c.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return c
}

func accountsRun(ctx context.Context, opts *AccountsOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	t, err := openAccounts(ctx, opts.Config, opts.LookupEnv)
	if err != nil {
		return err
	}
	defer t.st.Close()
	rows, err := t.st.ListAccounts(ctx)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	list := account.Describe(rows, t.snap, t.key, opts.Now(), nil)
	if use, err := t.st.AccountUsage(ctx, account.StartOfDay(opts.Now())); err == nil {
		account.AddUsage(list, use)
	}
	if opts.JSON {
		if list == nil {
			list = []account.Status{}
		}
		return writeJSONOut(opts.IO, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(opts.IO.Out, "no oauth channel in the config")
		return nil
	}
	if !opts.IO.IsTTY {
		for _, s := range list {
			fmt.Fprintln(opts.IO.Out, strings.Join([]string{s.Channel, s.Account, s.Provider, s.State, s.Reason, rfc(s.AccessExpires), rfc(s.LastRefresh),
				pct(s.Quota.Primary), resets(s.Quota.Primary), pct(s.Quota.Secondary), resets(s.Quota.Secondary),
				fmt.Sprint(s.RequestsToday), fmt.Sprintf("%.4f", s.CostToday)}, "\t"))
		}
		return nil
	}
	tb := newTable("CHANNEL", "ACCOUNT", "PROVIDER", "STATE", "EXPIRES", "REFRESHED", "PRIMARY", "SECONDARY", "REQ TODAY", "COST TODAY")
	for _, s := range list {
		state := s.State
		switch {
		case s.ExhaustedUntil != nil:
			state += " until " + s.ExhaustedUntil.Local().Format("01-02 15:04")
		case s.Reason != "" && s.State != account.StateSignedOut:
			state += ": " + s.Reason
		}
		tb.add(plain(s.Channel), plain(s.Account), plain(s.Provider), plain(state), plain(when(s.AccessExpires)), plain(when(s.LastRefresh)),
			plain(window(s.Quota.Primary)), plain(window(s.Quota.Secondary)), plain(fmtCount(s.RequestsToday)), plain(fmtCost(s.CostToday)))
	}
	return tb.print(opts.IO.Out, true, opts.IO.Color)
}

func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Local().Format("01-02 15:04")
}

func rfc(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func pct(w *account.Window) string {
	if w == nil {
		return ""
	}
	return fmt.Sprintf("%g", w.UsedPercent)
}

func resets(w *account.Window) string {
	if w == nil || w.ResetsAt.IsZero() {
		return ""
	}
	return w.ResetsAt.UTC().Format(time.RFC3339)
}

func window(w *account.Window) string {
	if w == nil {
		return "-"
	}
	s := fmt.Sprintf("%g%%", w.UsedPercent)
	if !w.ResetsAt.IsZero() {
		s += " ↻" + w.ResetsAt.Local().Format("01-02 15:04")
	}
	return s
}

// LogoutOptions are the flags of `ccload logout`.
type LogoutOptions struct {
	IO        IOStreams
	LookupEnv func(string) (string, bool)
	Config    string
	Channel   string
	Account   string
}

// NewCmdLogout builds `ccload logout`.
func NewCmdLogout(f *Factory, runF func(*LogoutOptions) error) *cobra.Command {
	opts := &LogoutOptions{IO: f.IO, LookupEnv: f.LookupEnv}
	c := &cobra.Command{
		Use:     "logout --channel C --account A",
		Short:   "Delete an account's stored credential; running servers stop using it within seconds",
		Example: `  ccload logout --channel chatgpt --account alice`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return logoutRun(c.Context(), opts)
		},
	}
	c.Flags().StringVarP(&opts.Config, "config", "c", "ccload.yaml", "config file")
	c.Flags().StringVar(&opts.Channel, "channel", "", "oauth channel (required)")
	c.Flags().StringVar(&opts.Account, "account", "", "account name (required)")
	_ = c.MarkFlagRequired("channel")
	_ = c.MarkFlagRequired("account")
	return c
}

func logoutRun(ctx context.Context, opts *LogoutOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	t, err := openAccounts(ctx, opts.Config, opts.LookupEnv)
	if err != nil {
		return err
	}
	defer t.st.Close()
	ok, err := t.st.DeleteAccount(ctx, opts.Channel, opts.Account)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	if !ok {
		return &exitError{code: exitFail, err: fmt.Errorf("%s/%s was not signed in", opts.Channel, opts.Account)}
	}
	fmt.Fprintf(opts.IO.Out, "signed out %s/%s\n", opts.Channel, opts.Account)
	return nil
}
