package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpanQueryPlan pins the plan QueryLogs' span walk depends on: spans
// read newest first by their primary key, log rows by rowid range, and no
// sort, which would read every row of the value before the first page.
// It also checks that SQLite no longer keeps the indexes spans replace.
func TestSpanQueryPlan(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, "sqlite", filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := st.(*sqlStore)
	where := []string{"ts >= ?", "ts < ?", "channel = ?", "status >= ?", "status < ?", "id < ?"}
	args := []any{int64(1), int64(2), "beta", 200, 300, int64(5000)}
	for _, before := range []int64{0, 5000} {
		query, all := spanQuery("token", "alice", where, args, before, 100)
		rows, err := s.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, all...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		got := strings.Join(plan, "; ")
		for _, want := range []string{"SEARCH s USING PRIMARY KEY (field=? AND value=?", "SEARCH l USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"} {
			if !strings.Contains(got, want) {
				t.Errorf("before %d: plan %q lacks %q", before, got, want)
			}
		}
		if strings.Contains(got, "TEMP B-TREE") {
			t.Errorf("before %d: plan %q sorts", before, got)
		}
	}

	var n int
	err = s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'index'
 AND name IN ('idx_request_logs_token', 'idx_request_logs_channel', 'idx_request_logs_model')`).Scan(&n)
	if err != nil || n != 0 {
		t.Errorf("%d of the three filter indexes are left (%v)", n, err)
	}
}
