package cmd

import (
	"github.com/ccload/ccload/internal/termtext"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ccload/ccload/admin"
	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/store"
)

// LogsOptions are the flags of `ccload logs`.
type LogsOptions struct {
	IO     IOStreams
	Admin  AdminFlags
	Client func() (*adminapi.Client, error)

	Follow                               bool
	Since, Until                         string
	Channel, Token, Model, Status, Scope string
	Limit                                int
	JSON                                 bool
	DB, Driver                           string // read the database directly

	Now func() time.Time // nil = time.Now
	Loc *time.Location   // zone of human times; nil = local
	// Retry is the wait before reconnecting a followed stream (1 s).
	Retry time.Duration
}

// NewCmdLogs builds `ccload logs`.
func NewCmdLogs(f *Factory, runF func(*LogsOptions) error) *cobra.Command {
	opts := &LogsOptions{IO: f.IO}
	opts.Client = f.adminClient(&opts.Admin)
	c := &cobra.Command{
		Use:   "logs [-f] [--since 1h] [--channel C] [--token T] [--model M] [--status 5xx] [--scope S] [--json]",
		Short: "Query or follow request logs",
		Long: `Print request logs, oldest first: the newest --limit rows matching the
filters, from the running server's admin API (or, with --db, from the
database itself). -f then follows new requests as they end, from the live
event stream, until interrupted; it reconnects when the server restarts.

--since and --until take a duration back from now ("90s", "1h", "7d"), an
RFC 3339 time or a date. --status takes a class (2xx, 4xx, 5xx), --scope a
failure scope (key, model, url, channel).

Without a terminal each row is one tab-separated line: id, time (RFC 3339,
UTC), token, model, channel, status, failure_scope, attempts, ttfb_ms,
duration_ms, input_tokens, output_tokens, cost_usd, error. --json prints one
JSON object per line, as in /admin/logs (admin/API.md); followed rows come
from events and have id 0 and no key, url or cost.`,
		Example: `  ccload logs --since 1h --status 5xx
  ccload logs -f --channel anthropic-main
  ccload logs --db data/ccload.db --token alice --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			ctx := c.Context()
			if opts.Follow {
				var stop context.CancelFunc
				ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
			}
			return logsRun(ctx, opts)
		},
	}
	addAdminFlags(c, &opts.Admin)
	fl := c.Flags()
	fl.BoolVarP(&opts.Follow, "follow", "f", false, "follow new requests as they end")
	fl.StringVar(&opts.Since, "since", "", `only requests since, e.g. "1h" or "2026-01-02T15:04:05Z"`)
	fl.StringVar(&opts.Until, "until", "", "only requests before")
	fl.StringVar(&opts.Channel, "channel", "", "only this channel")
	fl.StringVar(&opts.Token, "token", "", "only this client token (by name)")
	fl.StringVar(&opts.Model, "model", "", "only this model (as the client asked)")
	fl.StringVar(&opts.Status, "status", "", "only this status class: 2xx, 4xx, 5xx")
	fl.StringVar(&opts.Scope, "scope", "", "only failures of this scope: key, model, url, channel")
	fl.IntVarP(&opts.Limit, "limit", "n", 0, "rows to print (default 50; 10 with -f)")
	fl.BoolVar(&opts.JSON, "json", false, "print JSON lines (stable, see admin/API.md)")
	fl.StringVar(&opts.DB, "db", "", "read this database instead of asking the server (SQLite file or DSN)")
	fl.StringVar(&opts.Driver, "driver", "sqlite", "database driver for --db: sqlite, mysql, postgres")
	c.AddCommand(NewCmdLogsShow(f, nil))
	return c
}

func logsRun(ctx context.Context, opts *LogsOptions) error {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	limit := opts.Limit
	switch {
	case limit < 0:
		return &exitError{code: exitUsage, err: errors.New("--limit must not be negative")}
	case limit == 0 && opts.Follow:
		limit = 10
	case limit == 0:
		limit = 50
	}
	class, err := admin.ParseStatusClass(opts.Status)
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("--status: %w", err)}
	}
	for _, t := range []struct{ flag, v string }{{"--since", opts.Since}, {"--until", opts.Until}} {
		if _, err := admin.ParseTime(t.v, now()); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("%s: %w", t.flag, err)}
		}
	}
	p := &logPrinter{io: opts.IO, json: opts.JSON, loc: opts.Loc, now: now()}
	if p.loc == nil {
		p.loc = time.Local
	}

	if opts.DB != "" {
		if opts.Follow {
			return &exitError{code: exitUsage, err: errors.New("-f needs the running server; it cannot follow with --db")}
		}
		rows, err := queryDB(ctx, opts, class, limit, now())
		if err != nil {
			return &exitError{code: exitFail, err: err}
		}
		return p.history(rows)
	}

	cl, err := opts.Client()
	if err != nil {
		return err
	}
	// Subscribe before reading the history, so no request ending in
	// between is missed.
	var stream *adminapi.EventStream
	if opts.Follow {
		if stream, err = cl.Events(ctx, "end"); err != nil {
			return &exitError{code: exitFail, err: err}
		}
		defer stream.Close()
	}
	page, err := cl.Logs(ctx, adminapi.LogFilter{Since: opts.Since, Until: opts.Until, Channel: opts.Channel,
		Token: opts.Token, Model: opts.Model, Status: opts.Status, Scope: opts.Scope, Limit: limit})
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	if err := p.history(page.Rows); err != nil {
		return err
	}
	if !opts.Follow {
		if len(page.Rows) == 0 && opts.IO.IsTTY {
			fmt.Fprintln(opts.IO.Err, "no matching requests")
		}
		return nil
	}
	return follow(ctx, opts, cl, stream, p, class)
}

// queryDB reads rows straight from the database (design §3).
func queryDB(ctx context.Context, opts *LogsOptions, class, limit int, now time.Time) ([]adminapi.LogEntry, error) {
	st, err := store.Open(ctx, opts.Driver, opts.DB)
	if err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	defer st.Close()
	since, _ := admin.ParseTime(opts.Since, now)
	until, _ := admin.ParseTime(opts.Until, now)
	rows, err := st.QueryLogs(ctx, store.LogQuery{Since: since, Until: until, Token: opts.Token, Channel: opts.Channel,
		Model: opts.Model, FailureScope: opts.Scope, StatusClass: class, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]adminapi.LogEntry, len(rows))
	for i, r := range rows {
		out[i] = admin.NewLogEntry(r)
	}
	return out, nil
}

// follow prints end events that pass the filters until ctx ends,
// reconnecting when the stream breaks.
func follow(ctx context.Context, opts *LogsOptions, cl *adminapi.Client, stream *adminapi.EventStream, p *logPrinter, class int) error {
	retry := opts.Retry
	if retry <= 0 {
		retry = time.Second
	}
	defer func() {
		if stream != nil {
			stream.Close() // the current one
		}
	}()
	for {
		for ev := range stream.C {
			if ev.Type != "end" || !eventMatches(ev, opts, class) {
				continue
			}
			if err := p.row(entryFromEvent(ev)); err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		fmt.Fprintf(opts.IO.Err, "ccload logs: lost the event stream (%v); reconnecting\n", stream.Err())
		stream.Close()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(retry):
			}
			var err error
			if stream, err = cl.Events(ctx, "end"); err == nil {
				fmt.Fprintln(opts.IO.Err, "ccload logs: reconnected")
				break
			}
			if ctx.Err() != nil {
				return nil
			}
		}
	}
}

func eventMatches(ev adminapi.Event, opts *LogsOptions, class int) bool {
	eq := func(want, have string) bool { return want == "" || want == have }
	return eq(opts.Channel, ev.Channel) && eq(opts.Token, ev.Token) && eq(opts.Model, ev.Model) &&
		eq(opts.Scope, ev.FailureScope) && (class == 0 || ev.Status/100 == class)
}

// entryFromEvent is a log row as far as an end event tells it.
func entryFromEvent(ev adminapi.Event) adminapi.LogEntry {
	return adminapi.LogEntry{
		Time: ev.Time.Add(-time.Duration(ev.ElapsedMs) * time.Millisecond).Truncate(time.Millisecond), Token: ev.Token, Channel: ev.Channel,
		ClientProtocol: ev.ClientProtocol, UpstreamProtocol: ev.UpstreamProtocol, Model: ev.Model,
		Status: ev.Status, FailureScope: ev.FailureScope, Attempts: ev.Attempts, AttemptLog: []adminapi.AttemptLog{},
		TTFBMs: ev.TTFBMs, DurationMs: ev.ElapsedMs, InputTokens: ev.InputTokens, OutputTokens: ev.OutputTokens,
		Stream: ev.Stream, Error: ev.Error,
	}
}

// logPrinter writes rows in the chosen format. Human rows have fixed
// column widths, so that followed rows line up with the history.
type logPrinter struct {
	io      IOStreams
	json    bool
	loc     *time.Location
	now     time.Time
	dated   bool // show the date: some row is not from today
	started bool // header printed
}

// Column widths of human rows; NOTE takes the rest of the 100 columns.
var logCols = []struct {
	name  string
	width int
}{{"TOKEN", 8}, {"MODEL", 16}, {"CHANNEL", 10}, {"ST", 3}, {"TTFB", 5}, {"DUR", 5}, {"IN", 5}, {"OUT", 5}, {"COST", 7}}

// history prints a page of rows (newest first, as the API returns them)
// oldest first.
func (p *logPrinter) history(rows []adminapi.LogEntry) error {
	today := p.now.In(p.loc).Format(time.DateOnly)
	for _, r := range rows {
		p.dated = p.dated || r.Time.In(p.loc).Format(time.DateOnly) != today
	}
	for _, r := range slices.Backward(rows) {
		if err := p.row(r); err != nil {
			return err
		}
	}
	return nil
}

func (p *logPrinter) row(r adminapi.LogEntry) error {
	w := p.io.Out
	if p.json {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	r = escapeEntry(r)
	if !p.io.IsTTY {
		_, err := fmt.Fprintln(w, strings.Join([]string{
			strconv.FormatInt(r.ID, 10), r.Time.UTC().Format(time.RFC3339Nano), r.Token, r.Model, r.Channel,
			strconv.Itoa(r.Status), r.FailureScope, strconv.Itoa(r.Attempts), strconv.FormatInt(r.TTFBMs, 10),
			strconv.FormatInt(r.DurationMs, 10), strconv.FormatInt(r.InputTokens, 10), strconv.FormatInt(r.OutputTokens, 10),
			fmtUSD(r.Cost), oneLine(r.Error)}, "\t"))
		return err
	}
	layout := "15:04:05"
	if p.dated {
		layout = "01-02 15:04:05"
	}
	var b strings.Builder
	if !p.started {
		p.started = true
		b.WriteString(pad("TIME", len(layout)))
		for _, c := range logCols {
			b.WriteString(" " + pad(c.name, c.width))
		}
		b.WriteString(" NOTE")
		fmt.Fprintln(w, paint(b.String(), colorDim, p.io.Color))
		b.Reset()
	}
	status := strconv.Itoa(r.Status)
	fields := []string{r.Token, r.Model, r.Channel, status, fmtMs(r.TTFBMs), fmtMs(r.DurationMs),
		fmtCount(r.InputTokens), fmtCount(r.OutputTokens), fmtCost(r.Cost)}
	b.WriteString(r.Time.In(p.loc).Format(layout))
	used := len(layout)
	for i, c := range logCols {
		s := pad(fields[i], c.width)
		if c.name == "ST" {
			s = paint(s, statusColor(r.Status), p.io.Color)
		}
		b.WriteString(" " + s)
		used += 1 + c.width
	}
	if note := logNote(r); note != "" {
		b.WriteString(" " + paint(fit(note, maxWidth-used-1), colorRed, p.io.Color))
	}
	out := strings.TrimRight(b.String(), " ")
	// The error gets a line of its own, under the row.
	if r.Error != "" {
		indent := len(layout) + 1
		out += "\n" + strings.Repeat(" ", indent) + paint(fit(oneLine(r.Error), maxWidth-indent), colorRed, p.io.Color)
	}
	_, err := fmt.Fprintln(w, out)
	return err
}

// logNote is the failure scope that was cooled, whether the answer was
// cut short and whether its model had no price: "key", "url incomplete",
// "unpriced".
func logNote(r adminapi.LogEntry) string {
	note := r.FailureScope
	if r.Incomplete {
		note = strings.TrimSpace(note + " incomplete")
	}
	if r.Unpriced {
		note = strings.TrimSpace(note + " unpriced")
	}
	return note
}

func statusColor(s int) string {
	switch {
	case s >= 200 && s < 400:
		return colorGreen
	case s >= 400 && s < 500:
		return colorYellow
	}
	return colorRed
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// escapeEntry shows the control characters of a row's client- and
// upstream-derived text escaped, for the human-readable forms.
func escapeEntry(r adminapi.LogEntry) adminapi.LogEntry {
	for _, f := range []*string{&r.Token, &r.Model, &r.Channel, &r.Error, &r.FailureScope, &r.URL, &r.Key, &r.RequestID, &r.UpstreamModel,
		&r.ClientProtocol, &r.UpstreamProtocol} {
		*f = termtext.Escape(*f)
	}
	return r
}
