package cmd

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccload/ccload/store"
)

// TestServePrunesOldLogsAtStart: rows older than storage.log_retention are
// gone within a minute of start, newer ones and usage_daily stay. The hourly runs are covered by
// the store suite's retention test.
func TestServePrunesOldLogsAtStart(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "logs.db")
	st, err := store.Open(ctx, "sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var rows []store.LogRow
	for i := range 30 {
		rows = append(rows, store.LogRow{Time: now.Add(-72*time.Hour - time.Duration(i)*time.Hour), RequestID: "old", Token: "t", Channel: "a", Model: "m", Status: 200, Cost: 0.5})
	}
	for i := range 10 {
		rows = append(rows, store.LogRow{Time: now.Add(-47*time.Hour + time.Duration(i)*time.Hour), RequestID: "new", Token: "t", Channel: "a", Model: "m", Status: 200, Cost: 0.25})
	}
	if err := st.InsertLogs(ctx, rows); err != nil {
		t.Fatal(err)
	}
	usageBefore, err := st.UsageDaily(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	base, stop := startServe(t, `version: 1
server: {listen: "127.0.0.1:0", admin_password: pw}
storage: {driver: sqlite, dsn: "`+db+`", log_retention: 2d}
channels:
  - name: a
    urls: [{url: "http://127.0.0.1:9", protocols: [anthropic]}]
    keys: [k]
    models: [m]
tokens:
  - {name: t, token_sha256: `+tokenHash("sk-t")+`}
`)
	h := waitHealth(t, base, "the first retention run", time.Minute, func(h healthJSON) bool {
		return h.Storage.Retention != nil && h.Storage.Retention.LastRun != nil
	})
	if r := h.Storage.Retention; r.Deleted != 30 || r.Keep != "2d" {
		t.Errorf("retention in /health: %+v; want 30 deleted, keep 2d", *r)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	st, err = store.Open(ctx, "sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	left, err := st.QueryLogs(ctx, store.LogQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 10 {
		t.Errorf("%d rows left, want the 10 newer than 2d", len(left))
	}
	for _, r := range left {
		if r.RequestID != "new" {
			t.Errorf("row from %s survived retention", r.Time)
		}
	}
	usageAfter, err := st.UsageDaily(ctx, "")
	if err != nil || len(usageAfter) != len(usageBefore) {
		t.Fatalf("usage_daily: %d days after, %d before (%v)", len(usageAfter), len(usageBefore), err)
	}
	for i := range usageAfter {
		if usageAfter[i] != usageBefore[i] {
			t.Errorf("usage_daily changed: %+v, was %+v", usageAfter[i], usageBefore[i])
		}
	}
}
