package cmd

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/internal/termtext"
)

// checkReport is the --json output of `ccload check`. It is a stable
// interface: fields are only ever added.
//
//	{
//	  "file": "ccload.yaml",     // the file, as given to -c
//	  "valid": true,             // false: the file has problems and nothing was probed
//	  "offline": false,          // true with --offline: nothing was probed
//	  "problems": [              // only when valid is false
//	    {"file": "ccload.yaml", "line": 4, "col": 5, "msg": "unknown field ..."}],
//	  "probes": [                // [] when nothing was probed; in file order
//	    {"channel": "a", "model": "claude-x", "upstream_model": "claude-x",
//	     "url": "https://api.example.com", "key": "sk-a…f3c9",  // fingerprint only
//	     "protocol": "anthropic", "stream": false,
//	     "ok": false, "status": 401,                 // 0 when no HTTP response
//	     "ttfb_ms": 120, "total_ms": 121,
//	     "kind": "auth", "scope": "key",             // omitted when ok
//	     "message": "invalid x-api-key"}],           // shortened, credentials redacted
//	  "summary": {
//	    "ok": 3, "failed": 1,
//	    "by_scope": {"key": 1, "model": 0, "url": 0, "channel": 0, "none": 0},
//	    "fail_on": ["key", "model", "url", "channel", "none"],  // scopes that fail the run
//	    "exit_code": 1},
//	  "unpriced": [              // only when some served model has no price
//	    {"channel": "a", "model": "my-model"}]
//	}
//
// kind is one of auth, rate_limit, server, timeout, network, not_found,
// client, canceled; scope one of key, model, url, channel, or "" (counted
// as "none": the upstream rejected the probe itself as a bad request).
type checkReport struct {
	File     string               `json:"file"`
	Valid    bool                 `json:"valid"`
	Offline  bool                 `json:"offline"`
	Problems config.Problems      `json:"problems,omitempty"`
	Probes   []engine.ProbeResult `json:"probes"`
	Summary  checkSummary         `json:"summary"`
	Unpriced []unpricedModel      `json:"unpriced,omitempty"` // models without a price; absent when every model is priced or the file is invalid
}

// checkSummary counts the probes of a check.
type checkSummary struct {
	OK       int            `json:"ok"`
	Failed   int            `json:"failed"`
	ByScope  map[string]int `json:"by_scope"`
	FailOn   []string       `json:"fail_on"`
	ExitCode int            `json:"exit_code"`

	failing int // failed probes whose scope is in FailOn
}

// scopeNone names failures with no scope in counts.
const scopeNone = "none"

func scopeName(s failure.Scope) string {
	if s == failure.ScopeNone {
		return scopeNone
	}
	return string(s)
}

// summarize counts results; failOn nil means every scope fails the run.
func summarize(results []engine.ProbeResult, failOn map[failure.Scope]bool) checkSummary {
	s := checkSummary{ByScope: map[string]int{scopeNone: 0}}
	for _, sc := range checkScopes {
		s.ByScope[string(sc)] = 0
		if failOn == nil || failOn[sc] {
			s.FailOn = append(s.FailOn, string(sc))
		}
	}
	if failOn == nil {
		s.FailOn = append(s.FailOn, scopeNone)
	}
	for _, r := range results {
		if r.OK {
			s.OK++
			continue
		}
		s.Failed++
		s.ByScope[scopeName(r.Scope)]++
		if failOn == nil || failOn[r.Scope] {
			s.failing++
		}
	}
	if s.failing > 0 {
		s.ExitCode = exitFail
	}
	return s
}

// line is the human summary: "5 ok, 3 failed (key: 1, model: 1, url: 1, channel: 0)".
func (s checkSummary) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d ok, %d failed (", s.OK, s.Failed)
	for i, sc := range checkScopes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %d", sc, s.ByScope[string(sc)])
	}
	if n := s.ByScope[scopeNone]; n > 0 {
		fmt.Fprintf(&b, ", %s: %d", scopeNone, n)
	}
	b.WriteString(")")
	return b.String()
}

// report prints the probe results and returns the run's exit error.
func report(opts *CheckOptions, plan []checkProbe, results []engine.ProbeResult, failOn map[failure.Scope]bool, unpriced []unpricedModel) error {
	sum := summarize(results, failOn)
	var err error
	switch {
	case opts.JSON:
		err = writeJSONOut(opts.IO, checkReport{File: opts.Config, Valid: true, Probes: results, Summary: sum, Unpriced: unpriced})
		fmt.Fprintln(opts.IO.Err, sum.line())
	case opts.IO.IsTTY:
		hosts := make([]string, len(plan))
		for i, p := range plan {
			hosts[i] = p.host
		}
		err = printProbeTable(opts.IO.Out, results, hosts, opts.Stream, opts.IO.Color)
		if err == nil {
			_, err = fmt.Fprintln(opts.IO.Out, sum.line())
		}
	default:
		err = writeProbeTSV(opts.IO.Out, results)
		fmt.Fprintln(opts.IO.Err, sum.line())
	}
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	if sum.failing == 0 && sum.Failed > 0 {
		fmt.Fprintf(opts.IO.Err, "%d failed probe(s) are outside --fail-on %s and do not fail the run\n",
			sum.Failed, strings.Join(sum.FailOn, ","))
	}
	if sum.failing > 0 {
		return &exitError{code: exitFail, err: errors.New("")} // the summary said why
	}
	return nil
}

// probeTSVHeader names the tab-separated columns.
var probeTSVHeader = []string{"channel", "model", "upstream_model", "url", "key", "protocol", "stream",
	"status", "ttfb_ms", "total_ms", "result", "kind", "scope", "message"}

// writeProbeTSV is the form for scripts: a header line, then one line per
// probe with URLs masked (config.MaskURL) and plain numbers. Fields are
// escaped as every CLI cell is (termtext): a tab or line break would break
// the columns, and an escape sequence from an upstream's message would
// reach the terminal that shows the file.
func writeProbeTSV(w io.Writer, results []engine.ProbeResult) error {
	if _, err := fmt.Fprintln(w, strings.Join(probeTSVHeader, "\t")); err != nil {
		return err
	}
	for _, r := range results {
		result := "ok"
		if !r.OK {
			result = "fail"
		}
		f := []string{r.Channel, r.Model, r.Upstream, r.URL, r.Key, string(r.Protocol), strconv.FormatBool(r.Stream),
			strconv.Itoa(r.Status), strconv.FormatInt(r.TTFBMs, 10), strconv.FormatInt(r.TotalMs, 10),
			result, string(r.Kind), string(r.Scope), r.Message}
		for i := range f {
			f[i] = termtext.Escape(f[i])
		}
		if _, err := fmt.Fprintln(w, strings.Join(f, "\t")); err != nil {
			return err
		}
	}
	return nil
}
