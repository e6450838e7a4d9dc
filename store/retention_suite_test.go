package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/wait"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/store"
)

// testRetention checks storage.log_retention end to end on one dialect: the
// first run happens as soon as Run starts, later runs follow on their own,
// rows newer than the retention stay, and usage_daily is kept whole.
func testRetention(t *testing.T, open Opener) {
	ctx := ctxFor(t)
	s := mustOpen(t, open)
	now := base.Add(40 * 24 * time.Hour)
	const keep = 7 * 24 * time.Hour

	old := makeRows(120)
	for i := range old {
		old[i].Time = now.Add(-keep - time.Hour - time.Duration(i)*time.Minute)
	}
	recent := makeRows(40)
	for i := range recent {
		recent[i].Time = now.Add(-keep + time.Minute + time.Duration(i)*time.Minute)
		recent[i].RequestID = "recent"
	}
	// Captured rows on both sides of the cutoff: retention takes the old
	// captures with their rows and keeps the recent ones.
	old[3].Debug, old[77].Debug = `{"old":3}`, `{"old":77}`
	recent[30].Debug = `{"recent":30}`
	if err := s.InsertLogs(ctx, append(append([]store.LogRow{}, old...), recent...)); err != nil {
		t.Fatal(err)
	}
	usageBefore, err := s.UsageDaily(ctx, "")
	if err != nil {
		t.Fatal(err)
	}

	clk := clock.NewFake(now)
	r := store.NewRetention(s, store.RetentionOptions{
		Keep:  func() time.Duration { return keep },
		Every: 5 * time.Millisecond, // later runs, so that the test sees one
		Clock: clk,
	})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); r.Run(runCtx) }()
	defer func() { stop(); <-done }()

	wait.Eventually(t, 30*time.Second, "the first run", func() bool { return !r.Stats().LastRun.IsZero() })
	st := r.Stats()
	if st.LastError != "" || st.Deleted != int64(len(old)) || st.Keep != keep {
		t.Fatalf("after the first run: %+v; want %d deleted, no error", st, len(old))
	}
	left := allLogs(t, s)
	if len(left) != len(recent) {
		t.Fatalf("%d rows left, want the %d recent ones", len(left), len(recent))
	}
	for _, row := range left {
		if row.RequestID != "recent" {
			t.Fatalf("row %q (%s) survived", row.RequestID, row.Time)
		}
	}
	if n, err := store.DebugCaptures(ctx, s); err != nil || n != 1 {
		t.Errorf("%d debug captures left (%v), want the recent one", n, err)
	}
	if got, err := s.GetLog(ctx, left[30].ID); err != nil || got.Debug != `{"recent":30}` {
		t.Errorf("the recent capture: %q, %v", got.Debug, err)
	}

	// Ten minutes later by the clock, the oldest recent rows have aged out
	// and a later run deletes them, with no restart.
	clk.Advance(10 * time.Minute)
	wait.Eventually(t, 30*time.Second, "a later run to prune newly aged rows", func() bool { return r.Stats().Deleted > int64(len(old)) })
	if left := allLogs(t, s); len(left) != len(recent)-9 {
		t.Errorf("%d rows left after the clock moved 10 minutes; want %d", len(left), len(recent)-9)
	}
	usageAfter, err := s.UsageDaily(ctx, "")
	if err != nil || !sameUsage(usageAfter, usageBefore) {
		t.Errorf("retention changed usage_daily (%v)", err)
	}
}

// TestRetentionForeverKeepsEverything checks that log_retention 0 keeps logs.
func TestRetentionForeverKeepsEverything(t *testing.T) {
	s, err := store.Open(context.Background(), "sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows := makeRows(5)
	for i := range rows {
		rows[i].Time = time.Now().Add(-400 * 24 * time.Hour)
	}
	if err := s.InsertLogs(context.Background(), rows); err != nil {
		t.Fatal(err)
	}
	r := store.NewRetention(s, store.RetentionOptions{Keep: func() time.Duration { return 0 }})
	if err := r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := allLogs(t, s); len(got) != len(rows) {
		t.Errorf("%d rows left, want all %d", len(got), len(rows))
	}
	if st := r.Stats(); st.Deleted != 0 || st.LastRun.IsZero() {
		t.Errorf("stats %+v", st)
	}
}
