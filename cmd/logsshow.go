package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ccload/ccload/admin"
	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/internal/termtext"
	"github.com/ccload/ccload/store"
)

// LogsShowOptions are the flags of `ccload logs show`.
type LogsShowOptions struct {
	IO     IOStreams
	Admin  AdminFlags
	Client func() (*adminapi.Client, error)

	ID         int64
	JSON       bool
	DB, Driver string         // read the database directly
	Loc        *time.Location // zone of the time; nil = local
}

// NewCmdLogsShow builds `ccload logs show ID`.
func NewCmdLogsShow(f *Factory, runF func(*LogsShowOptions) error) *cobra.Command {
	opts := &LogsShowOptions{IO: f.IO}
	opts.Client = f.adminClient(&opts.Admin)
	c := &cobra.Command{
		Use:   "show ID",
		Short: "Print one request log in full, with its debug capture",
		Long: `Print one request log (its id is the first column of ` + "`ccload logs`" + ` without a
terminal, and "id" in --json): every field, each upstream attempt, and, when
the request's token or channel has debug: true, the upstream requests and
responses that were captured (credentials masked, bodies cut at
server.debug_max_bytes). --json prints GET /admin/logs/{id} (admin/API.md).`,
		Example: `  ccload logs show 1234
  ccload logs show 1234 --json | jq .debug
  ccload logs show 1234 --db data/ccload.db`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return &exitError{code: exitUsage, err: fmt.Errorf("log id: want a positive integer, got %q", args[0])}
			}
			opts.ID = id
			if runF != nil {
				return runF(opts)
			}
			return logsShowRun(c.Context(), opts)
		},
	}
	addAdminFlags(c, &opts.Admin)
	fl := c.Flags()
	fl.BoolVar(&opts.JSON, "json", false, "print the JSON of GET /admin/logs/{id}")
	fl.StringVar(&opts.DB, "db", "", "read this database instead of asking the server (SQLite file or DSN)")
	fl.StringVar(&opts.Driver, "driver", "sqlite", "database driver for --db: sqlite, mysql, postgres")
	return c
}

func logsShowRun(ctx context.Context, opts *LogsShowOptions) error {
	var d *adminapi.LogDetail
	if opts.DB != "" {
		st, err := store.Open(ctx, opts.Driver, opts.DB)
		if err != nil {
			return &exitError{code: exitFail, err: fmt.Errorf("--db: %w", err)}
		}
		defer st.Close()
		r, err := st.GetLog(ctx, opts.ID)
		if errors.Is(err, store.ErrLogNotFound) {
			return &exitError{code: exitFail, err: fmt.Errorf("no request log %d", opts.ID)}
		}
		if err != nil {
			return &exitError{code: exitFail, err: err}
		}
		v := admin.NewLogDetail(r)
		d = &v
	} else {
		cl, err := opts.Client()
		if err != nil {
			return err
		}
		if d, err = cl.Log(ctx, opts.ID); err != nil {
			return &exitError{code: exitFail, err: err}
		}
	}
	if opts.JSON {
		b, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(opts.IO.Out, "%s\n", b)
		return err
	}
	loc := opts.Loc
	if loc == nil {
		loc = time.Local
	}
	return printLogDetail(opts.IO.Out, d, loc)
}

// printLogDetail writes a row as "name  value" lines, its attempts, then
// its capture with headers and bodies as they were, control characters
// escaped (newlines kept, so an SSE body reads as one).
func printLogDetail(w io.Writer, d *adminapi.LogDetail, loc *time.Location) error {
	e := escapeEntry(d.LogEntry)
	var b strings.Builder
	field := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "%-10s %s\n", name, fmt.Sprintf(format, args...))
	}
	field("id", "%d", e.ID)
	field("time", "%s", e.Time.In(loc).Format("2006-01-02 15:04:05.000 MST"))
	if e.RequestID != "" {
		field("request", "%s", e.RequestID)
	}
	field("token", "%s", e.Token)
	field("model", "%s (upstream %s)", e.Model, orDash(e.UpstreamModel))
	field("channel", "%s  key %s", orDash(e.Channel), orDash(e.Key))
	field("url", "%s", orDash(e.URL))
	field("protocol", "%s -> %s", e.ClientProtocol, orDash(e.UpstreamProtocol))
	status := strconv.Itoa(e.Status)
	if note := logNote(e); note != "" {
		status += "  " + note
	}
	field("status", "%s", status)
	field("timing", "ttfb %s  total %s  attempts %d", fmtMs(e.TTFBMs), fmtMs(e.DurationMs), e.Attempts)
	field("tokens", "in %d  out %d  cache read %d  cache write %d  reasoning %d",
		e.InputTokens, e.OutputTokens, e.CacheReadTokens, e.CacheWriteTokens, e.ReasoningTokens)
	field("cost", "%s", fmtUSD(e.Cost))
	if e.Stream {
		field("stream", "yes")
	}
	if e.ClientIP != "" {
		field("client", "%s", e.ClientIP)
	}
	if e.Error != "" {
		field("error", "%s", oneLine(e.Error))
	}
	for i, a := range e.AttemptLog {
		fmt.Fprintf(&b, "\nattempt %d  %s  key %s  %s  %s\n", i+1, termtext.Escape(a.Channel), termtext.Escape(a.Key),
			termtext.Escape(a.Protocol), termtext.Escape(a.UpstreamModel))
		fmt.Fprintf(&b, "  %s  status %d  %s", termtext.Escape(a.URL), a.Status, fmtMs(a.DurationMs))
		if a.Kind != "" {
			fmt.Fprintf(&b, "  %s/%s", termtext.Escape(a.Kind), termtext.Escape(a.Scope))
		}
		b.WriteString("\n")
		if a.Error != "" {
			fmt.Fprintf(&b, "  error: %s\n", termtext.Escape(oneLine(a.Error)))
		}
		for _, n := range a.Notes {
			fmt.Fprintf(&b, "  note: %s\n", termtext.Escape(n))
		}
	}
	if d.Debug == nil {
		b.WriteString("\nno debug capture (set debug: true on the channel or token to capture requests)\n")
	} else {
		fmt.Fprintf(&b, "\ndebug capture: %d exchange(s), bodies cut at %d bytes\n", len(d.Debug.Exchanges), d.Debug.MaxBytes)
		for _, x := range d.Debug.Exchanges {
			rq := x.Request
			fmt.Fprintf(&b, "\n--- attempt %d: request\n%s %s\n", x.Attempt, termtext.Escape(rq.Method), termtext.Escape(rq.URL))
			writeDebugMessage(&b, rq.Header, rq.DebugBody)
			if x.Response == nil {
				fmt.Fprintf(&b, "\n--- attempt %d: no response\n", x.Attempt)
				continue
			}
			fmt.Fprintf(&b, "\n--- attempt %d: response\n%d\n", x.Attempt, x.Response.Status)
			writeDebugMessage(&b, x.Response.Header, x.Response.DebugBody)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeDebugMessage writes headers, a blank line and the body, and says
// when the body was cut or is base64.
func writeDebugMessage(b *strings.Builder, h []adminapi.DebugHeader, body adminapi.DebugBody) {
	for _, kv := range h {
		fmt.Fprintf(b, "%s: %s\n", termtext.Escape(kv.Name), termtext.Escape(kv.Value))
	}
	b.WriteString("\n")
	if body.Body != "" {
		b.WriteString(termtext.EscapeLines(strings.TrimRight(body.Body, "\n")))
		b.WriteString("\n")
	}
	switch {
	case body.Base64 && body.Truncated:
		fmt.Fprintf(b, "[base64; first %d of %d bytes]\n", min(int64(len(body.Body)*3/4), body.Size), body.Size)
	case body.Base64:
		fmt.Fprintf(b, "[base64; %d bytes]\n", body.Size)
	case body.Truncated:
		fmt.Fprintf(b, "[cut: first %d of %d bytes]\n", len(body.Body), body.Size)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
