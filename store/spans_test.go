package store_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccload/ccload/store"
)

// sqliteAt opens the SQLite store at path, closed when t ends.
func sqliteAt(t *testing.T, path string) store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), "sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestLogSpansBackfill: migration 0006 gives the rows already in a SQLite
// log the spans the Writer would have, so filtered queries find old rows
// and new ones alike. The test undoes the migration on a log written with
// spans, as an older ccload would have left it, and opens it again.
func TestLogSpansBackfill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	s := sqliteAt(t, path)
	rng := rand.New(rand.NewPCG(6, 12))
	rows := spreadRows(rng, 3000)
	insertSpread(t, s, rng, rows[:2000])
	ex := s.(interface {
		ExecForTest(ctx context.Context, query string) error
	})
	for _, q := range []string{
		"DROP TABLE request_log_spans",
		"CREATE INDEX idx_request_logs_token ON request_logs (token, id)",
		"CREATE INDEX idx_request_logs_channel ON request_logs (channel, id)",
		"CREATE INDEX idx_request_logs_model ON request_logs (model, id)",
		"DELETE FROM schema_migrations WHERE version = 6",
	} {
		if err := ex.ExecForTest(ctxFor(t), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	s2 := sqliteAt(t, path) // runs 0006 again: backfill, then drop the indexes
	all := insertSpread(t, s2, rng, rows[2000:])
	if len(all) != len(rows) {
		t.Fatalf("stored %d rows, want %d", len(all), len(rows))
	}
	if matched := checkFilters(t, s2, all); matched < 100 {
		t.Errorf("only %d queries match any row", matched)
	}
}

// TestLogSpansPruned: retention deletes the spans below the oldest row it
// leaves, and filtered queries on what is left stay exact.
func TestLogSpansPruned(t *testing.T) {
	s := sqliteAt(t, filepath.Join(t.TempDir(), "prune.db"))
	rng := rand.New(rand.NewPCG(3, 4))
	all := insertSpread(t, s, rng, spreadRows(rng, 3000))
	spans := func() int64 {
		n, err := store.LogSpans(ctxFor(t), s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := spans()
	cut := all[len(all)*2/3]
	if _, err := s.PruneLogs(ctxFor(t), cut.Time); err != nil {
		t.Fatal(err)
	}
	left := allLogs(t, s)
	if len(left) != len(all)-len(all)*2/3 || left[0].ID != cut.ID {
		t.Fatalf("prune left %d rows from ID %d, want %d from %d", len(left), left[0].ID, len(all)-len(all)*2/3, cut.ID)
	}
	if after := spans(); after >= before*2/3 || after == 0 {
		t.Errorf("spans: %d before pruning two thirds of the log, %d after", before, after)
	}
	if matched := checkFilters(t, s, left); matched < 50 {
		t.Errorf("only %d queries match what pruning left", matched)
	}
	if _, err := s.PruneLogs(ctxFor(t), cut.Time.Add(time.Hour*24*365)); err != nil {
		t.Fatal(err)
	}
	if n := spans(); n != 0 {
		t.Errorf("%d spans left with no log row", n)
	}
}
