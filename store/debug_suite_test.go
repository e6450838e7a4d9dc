package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ccload/ccload/store"
)

// testDebugCapture checks request_debug: captures are stored
// beside their rows in one InsertLogs, only GetLog returns them, rows keep
// their batch order around the single-row inserts a capture takes, and a
// capture far larger than a MySQL TEXT survives.
func testDebugCapture(t *testing.T, open Opener) {
	ctx := ctxFor(t)
	s := mustOpen(t, open)
	rows := makeRows(300) // more than one 128-row chunk on either side of captures
	big := `{"body":"` + strings.Repeat("x", 200<<10) + `"}`
	captured := map[string]string{
		"req-0000": `{"n":0}`,
		"req-0005": `{"n":5,"nul":"a` + "\x00" + `b"}`,
		"req-0006": `{"n":6}`,
		"req-0150": big,
		"req-0299": `{"n":299}`,
	}
	for i := range rows {
		rows[i].Debug = captured[rows[i].RequestID]
	}
	stored := insert(t, s, rows)
	if len(stored) != len(rows) {
		t.Fatalf("%d rows stored, want %d", len(stored), len(rows))
	}
	for i, r := range stored {
		if r.RequestID != rows[i].RequestID {
			t.Fatalf("row %d is %q, want %q: captures broke the batch order", i, r.RequestID, rows[i].RequestID)
		}
		if r.Debug != "" {
			t.Fatalf("QueryLogs returned a capture for %q", r.RequestID)
		}
	}
	for _, r := range stored {
		got, err := s.GetLog(ctx, r.ID)
		if err != nil {
			t.Fatalf("GetLog(%d): %v", r.ID, err)
		}
		want := captured[r.RequestID]
		want = strings.ReplaceAll(want, "\x00", "") // PostgreSQL cannot store NUL in text
		if got.Debug != want {
			t.Errorf("GetLog(%d) %q: capture of %d bytes, want %d", r.ID, r.RequestID, len(got.Debug), len(want))
		}
		r.Debug = got.Debug
		if fmt.Sprint(got) != fmt.Sprint(r) {
			t.Errorf("GetLog(%d) = %+v\nwant %+v", r.ID, got, r)
		}
	}
	last := stored[len(stored)-1].ID
	if _, err := s.GetLog(ctx, last+1000); !errors.Is(err, store.ErrLogNotFound) {
		t.Errorf("GetLog of a missing ID: %v, want ErrLogNotFound", err)
	}
	// A batch of only captured rows, and usage still adds up for them.
	more := makeRows(3)
	for i := range more {
		more[i].RequestID = fmt.Sprintf("more-%d", i)
		more[i].Debug = `{"more":true}`
	}
	all := insert(t, s, more)
	for _, r := range all[len(all)-3:] {
		if got, err := s.GetLog(ctx, r.ID); err != nil || got.Debug != `{"more":true}` {
			t.Errorf("GetLog(%d) %q = %q, %v", r.ID, r.RequestID, got.Debug, err)
		}
	}
	usage, err := s.UsageDaily(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, u := range usage {
		n += u.Requests
	}
	if n != int64(len(rows)+len(more)) {
		t.Errorf("usage_daily counts %d requests, want %d", n, len(rows)+len(more))
	}
}

// testPruneDebug checks that PruneLogs takes captures with their rows and
// counts only the rows.
func testPruneDebug(t *testing.T, open Opener) {
	ctx := ctxFor(t)
	s := mustOpen(t, open)
	rows := makeRows(20)
	for i := range rows {
		rows[i].Debug = fmt.Sprintf(`{"i":%d}`, i)
	}
	stored := insert(t, s, rows)
	cutoff := rows[10].Time
	n, err := s.PruneLogs(ctx, cutoff)
	if err != nil || n != 10 {
		t.Fatalf("PruneLogs = %d, %v; want 10 (captures not counted)", n, err)
	}
	for i, r := range stored {
		got, err := s.GetLog(ctx, r.ID)
		switch {
		case i < 10 && !errors.Is(err, store.ErrLogNotFound):
			t.Errorf("pruned row %d: GetLog = %v", i, err)
		case i >= 10 && (err != nil || got.Debug != rows[i].Debug):
			t.Errorf("kept row %d: GetLog = %q, %v", i, got.Debug, err)
		}
	}
	// The captures went too, not just their rows.
	if left, err := store.DebugCaptures(ctx, s); err != nil || left != 10 {
		t.Errorf("%d captures left (%v), want the 10 of the kept rows", left, err)
	}
}
