package cmd

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/engine/failure"
)

// CheckOptions are the flags of `ccload check`.
type CheckOptions struct {
	// IO.IsTTY picks the output: an aligned table on a terminal,
	// tab-separated lines otherwise. Tests set it.
	IO       IOStreams
	Config   string
	Offline  bool
	Channels []string // --channel: only these channels (disabled ones too)
	Models   []string // --model: only these models (client or upstream name; disabled ones too)
	Stream   bool     // --stream: probe streaming as well as non-streaming
	Parallel int      // probes in flight at once
	Timeout  time.Duration
	// FailOn lists the scopes whose failures fail the run (exit 1). Empty
	// means every failed probe does.
	FailOn []string
	JSON   bool
	// Strict makes models without a price an error (exit 1) instead of a
	// warning.
	Strict bool
	// Chat, when set, is a prompt sent to each selected channel × model
	// through the normal request path instead of the minimal probes; the
	// answers are printed as they stream.
	Chat string
	// LookupEnv reads the file's ${VAR}s; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Defaults of the probe flags.
const (
	defaultCheckParallel = 4
	defaultCheckTimeout  = 20 * time.Second
)

// checkScopes are the values --fail-on accepts, in the order they are shown.
var checkScopes = []failure.Scope{failure.ScopeKey, failure.ScopeModel, failure.ScopeURL, failure.ScopeChannel}

// NewCmdCheck builds `ccload check`.
func NewCmdCheck(f *Factory, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{IO: f.IO, LookupEnv: f.LookupEnv}
	c := &cobra.Command{
		Use:   "check -c FILE [--offline] [--channel N]... [--model M]... [--stream] [--json] [--chat PROMPT]",
		Short: "Validate a config file and probe every channel with a real request",
		Long: `Validate the config file, printing every problem as file:line:col: message.
Unless --offline, then send one minimal real request (tiny max tokens, one
short user message) to every enabled channel x enabled model x URL x key,
through the same connection settings as serve (proxy, rewrite rules, model
renames), in the protocol the URL speaks. --stream probes streaming too.
--channel and --model narrow the set (and may name disabled ones).

Output on a terminal is a table (key fingerprints only) and a summary line
"N ok, M failed (key: a, model: b, url: c, channel: d)". Without a terminal
it is tab-separated with a header line: channel, model, upstream_model, url,
key, protocol, stream, status, ttfb_ms, total_ms, result, kind, scope,
message; the summary goes to stderr. --json prints one object:

  {"file": "ccload.yaml", "valid": true, "offline": false,
   "problems": [...],           (only when valid is false)
   "probes": [{"channel", "model", "upstream_model", "url", "key",
               "protocol", "stream", "ok", "status", "ttfb_ms",
               "total_ms", "kind", "scope", "message"}, ...],
   "summary": {"ok": N, "failed": M, "by_scope": {"key": a, "model": b,
               "url": c, "channel": d, "none": e}, "fail_on": [...],
               "exit_code": 0}}

A failure's scope is what the classifier blames: key (401/403, quota),
model (404 model, 5xx), url (refused, DNS, TLS, timeout) or channel;
"none" when the upstream rejected the probe itself as a bad request.

Models that no price covers (the embedded table, the file's pricing:
entries and, unless --offline, the price_catalog fetched once) are listed
on stderr as warnings, and in --json as "unpriced": [{"channel", "model"}];
--strict makes them an error. --offline never fetches anything.

--chat "prompt" sends the prompt instead of the minimal probes, once per
selected channel x model, through the same request path as serve (routing
restricted to that channel: its keys and URLs are tried in order, the
request converted to the protocol its URL speaks), and prints each answer
as it streams, under a "== channel / model" line and above a "-- ok" or
"-- failed" line. It cannot be combined with --json.

Exit status: 0 valid and every probe ok; 1 invalid file, a failed probe
whose scope is in --fail-on (default: any failed probe), or with --strict a
model without a price; 2 usage error.`,
		Example: `  ccload check --offline -c ccload.yaml          # validate only; for pull requests
  ccload check -c ccload.yaml                    # probe every channel x model x URL x key
  ccload check -c ccload.yaml --json --fail-on key,channel   # for scheduled jobs
  ccload check -c ccload.yaml --channel relay --chat "Say hello in five words."`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return checkRun(opts)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&opts.Config, "config", "c", "ccload.yaml", "config file")
	fl.BoolVar(&opts.Offline, "offline", false, "validate only, send no request")
	fl.StringArrayVar(&opts.Channels, "channel", nil, "probe only this channel (repeatable)")
	fl.StringArrayVar(&opts.Models, "model", nil, "probe only this model (repeatable)")
	fl.BoolVar(&opts.Stream, "stream", false, "probe streaming too")
	fl.IntVar(&opts.Parallel, "parallel", defaultCheckParallel, "probes in flight at once")
	fl.DurationVar(&opts.Timeout, "timeout", defaultCheckTimeout, "time limit of one probe")
	fl.StringSliceVar(&opts.FailOn, "fail-on", nil, "scopes whose failures fail the run: key,model,url,channel (default: any failure)")
	fl.BoolVar(&opts.JSON, "json", false, "print JSON (stable; see --help)")
	fl.BoolVar(&opts.Strict, "strict", false, "models without a price are an error, not a warning")
	fl.StringVar(&opts.Chat, "chat", "", `send this prompt to each channel x model and print the answers (e.g. "Say hello in five words.")`)
	return c
}

// checkRun validates the file, then (unless Offline) probes it.
func checkRun(opts *CheckOptions) error {
	failOn, err := checkFlags(opts)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	snap, probs, err := loadForCheck(opts)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	if probs != nil {
		fmt.Fprintln(opts.IO.Err, probs.Error())
		fmt.Fprintf(opts.IO.Err, "%s: %d problem(s)\n", opts.Config, len(probs))
		if opts.JSON {
			rep := checkReport{File: opts.Config, Problems: probs, Probes: []engine.ProbeResult{}}
			rep.Summary = summarize(nil, failOn)
			rep.Summary.ExitCode = exitFail
			if err := writeJSONOut(opts.IO, rep); err != nil {
				return &exitError{code: exitFail, err: err}
			}
		}
		return &exitError{code: exitFail, err: errors.New("")}
	}
	if err := checkAccounts(opts, snap); err != nil {
		return err
	}
	plan, err := planProbes(snap, opts)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	unpriced := findUnpriced(opts, snap, checkPrices(opts, snap))
	warnUnpriced(opts.IO.Err, unpriced, opts.Strict)
	failUnpriced := func(err error) error {
		if err == nil && opts.Strict && len(unpriced) > 0 {
			return &exitError{code: exitFail, err: fmt.Errorf("%d model(s) without a price (--strict)", len(unpriced))}
		}
		return err
	}
	if opts.Offline {
		return failUnpriced(reportOffline(opts, snap, failOn, unpriced))
	}
	if opts.Chat != "" {
		return failUnpriced(runChats(opts, snap, plan))
	}
	if len(plan) == 0 {
		fmt.Fprintf(opts.IO.Err, "%s: valid; no enabled channel with an enabled model, URL and key to probe\n", opts.Config)
	} else if opts.IO.IsTTY && !opts.JSON {
		fmt.Fprintf(opts.IO.Err, "probing %d combination(s) of channel, model, URL and key (parallel %d, timeout %s)...\n",
			len(plan), opts.Parallel, opts.Timeout)
	}
	results := runProbes(snap, plan, opts.Parallel, opts.Timeout)
	return failUnpriced(report(opts, plan, results, failOn, unpriced))
}

// checkFlags checks the flag values cobra cannot, and returns --fail-on as
// a set (nil: every failure counts).
func checkFlags(opts *CheckOptions) (map[failure.Scope]bool, error) {
	// --offline sends nothing, so it ignores the probe settings.
	if !opts.Offline && opts.Parallel < 1 {
		return nil, fmt.Errorf("--parallel must be at least 1, got %d", opts.Parallel)
	}
	if !opts.Offline && opts.Timeout <= 0 {
		return nil, fmt.Errorf("--timeout must be greater than 0, got %s", opts.Timeout)
	}
	if len(opts.FailOn) == 0 {
		return nil, nil
	}
	set := map[failure.Scope]bool{}
	for _, v := range opts.FailOn {
		s := failure.Scope(strings.ToLower(strings.TrimSpace(v)))
		if !slices.Contains(checkScopes, s) {
			return nil, fmt.Errorf("--fail-on: unknown scope %q (want some of key,model,url,channel)", v)
		}
		set[s] = true
	}
	return set, nil
}

// loadForCheck reads and validates the file. An invalid file is returned
// as its problems; an unreadable one as err.
func loadForCheck(opts *CheckOptions) (*config.Snapshot, config.Problems, error) {
	data, err := os.ReadFile(opts.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	env := config.OSEnv()
	if opts.LookupEnv != nil {
		env.Lookup = opts.LookupEnv
	}
	snap, err := config.Parse(opts.Config, data, env)
	var probs config.Problems
	if errors.As(err, &probs) {
		return nil, probs, nil
	}
	return snap, nil, err
}

// reportOffline prints the result of a validation without probes.
func reportOffline(opts *CheckOptions, snap *config.Snapshot, failOn map[failure.Scope]bool, unpriced []unpricedModel) error {
	if opts.JSON {
		rep := checkReport{File: opts.Config, Valid: true, Offline: true, Probes: []engine.ProbeResult{}, Summary: summarize(nil, failOn), Unpriced: unpriced}
		return writeJSONOut(opts.IO, rep)
	}
	models := 0
	for _, ch := range snap.Channels {
		models += len(ch.Models)
	}
	fmt.Fprintf(opts.IO.Out, "%s: ok (%d channels, %d models, %d tokens)\n", opts.Config, len(snap.Channels), models, len(snap.Tokens))
	return nil
}
