package cmd

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/admin/adminapi"
)

// TestLogsShow: `ccload logs show ID` prints a captured request (channel
// side has debug: true) from the server and from the database, and says
// when a request has no capture.
func TestLogsShow(t *testing.T) {
	cfg := strings.Replace(cliConfig, "    models: [{name: claude-y, upstream: claude-y-2026}]\n",
		"    models: [{name: claude-y, upstream: claude-y-2026}]\n    debug: true\n", 1)
	s := startCLIServerWith(t, cfg)
	s.send(t, cliAlice, "claude-y", "", true)
	s.send(t, cliAlice, "claude-x", "", false)
	s.waitRows(t, 2)
	ctx := context.Background()

	io, out := ttyIO(true, false)
	if err := logsShowRun(ctx, &LogsShowOptions{IO: io, Client: s.client(), ID: 1, Loc: time.UTC}); err != nil {
		t.Fatal(err)
	}
	// Bodies are printed as they came, wider than 100 columns: not ".tty.".
	golden(t, s, "logs-show.txt", dateRe.ReplaceAllString(out.String(), "Date: DATE"))
	for _, want := range []string{"debug capture: 1 exchange(s), bodies cut at 65536 bytes", "x-api-key: sk-s…0003",
		"--- attempt 1: response\n200\n", "event: message_start", `"model":"claude-y-2026"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("logs show 1 lacks %q", want)
		}
	}
	// The same row read from the database.
	io, dbOut := ttyIO(true, false)
	if err := logsShowRun(ctx, &LogsShowOptions{IO: io, DB: s.DB, Driver: "sqlite", ID: 1, Loc: time.UTC}); err != nil {
		t.Fatal(err)
	}
	if dbOut.String() != out.String() {
		t.Errorf("--db output differs:\n%s\n--- server:\n%s", dbOut, out)
	}

	io, out = ttyIO(false, true)
	if err := logsShowRun(ctx, &LogsShowOptions{IO: io, Client: s.client(), ID: 2, JSON: true}); err != nil {
		t.Fatal(err)
	}
	var d adminapi.LogDetail
	if err := json.Unmarshal([]byte(out.String()), &d); err != nil || d.ID != 2 || d.Debug != nil || d.Channel != "main" {
		t.Errorf("logs show 2 --json: %v %+v", err, d)
	}
	io, out = ttyIO(true, false)
	if err := logsShowRun(ctx, &LogsShowOptions{IO: io, Client: s.client(), ID: 2}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "no debug capture") {
		t.Errorf("logs show 2:\n%s", out)
	}

	io, _ = ttyIO(true, false)
	err := logsShowRun(ctx, &LogsShowOptions{IO: io, Client: s.client(), ID: 99})
	if err == nil || !strings.Contains(err.Error(), "no request log 99") {
		t.Errorf("logs show 99: %v", err)
	}
}

// dateRe is the mock's Date header, the one line of the capture that
// follows the wall clock.
var dateRe = regexp.MustCompile(`Date: [^\n]+`)

func TestLogsShowArgs(t *testing.T) {
	f := &Factory{}
	var got *LogsShowOptions
	c := NewCmdLogsShow(f, func(o *LogsShowOptions) error { got = o; return nil })
	c.SetArgs([]string{"42", "--json"})
	if err := c.Execute(); err != nil || got == nil || got.ID != 42 || !got.JSON {
		t.Fatalf("show 42 --json: %v %+v", err, got)
	}
	c = NewCmdLogsShow(f, func(*LogsShowOptions) error { return nil })
	c.SetArgs([]string{"nope"})
	c.SilenceErrors, c.SilenceUsage = true, true
	if err := c.Execute(); err == nil {
		t.Error("show nope: no error")
	}
}
