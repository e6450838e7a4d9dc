package store

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMigrationsComplete checks that every migration version exists for
// every dialect, with the same name, numbered upwards from 1. Numbers are
// allocated to pieces of work ahead of time, so a gap (0004 landed, 0003
// not yet) is allowed: applyMigrations runs whatever is missing, in
// order, so a late 0003 must not depend on 0004 or the other way round.
//
// A version may have no statements for some dialects (0006: SQLite's log
// spans), never for all of them.
func TestMigrationsComplete(t *testing.T) {
	var ref []migration
	empty := map[int]int{} // version: dialects whose file has no statement
	for name := range dialects {
		migs, err := loadMigrations(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(migs) == 0 {
			t.Fatalf("%s: no migrations embedded", name)
		}
		if migs[0].version != 1 {
			t.Errorf("%s: the first migration has version %d, want 1", name, migs[0].version)
		}
		for _, m := range migs {
			if len(m.stmts) == 0 {
				empty[m.version]++
			}
		}
		if ref == nil {
			ref = migs
			continue
		}
		if len(migs) != len(ref) {
			t.Errorf("%s has %d migrations, another dialect %d", name, len(migs), len(ref))
			continue
		}
		for i := range migs {
			if migs[i].version != ref[i].version || migs[i].name != ref[i].name {
				t.Errorf("%s migration %d is %04d_%s, another dialect's %04d_%s", name, i+1,
					migs[i].version, migs[i].name, ref[i].version, ref[i].name)
			}
		}
	}
	for v, n := range empty {
		if n == len(dialects) {
			t.Errorf("migration %d has no statements in any dialect", v)
		}
	}
}

func TestSplitSQL(t *testing.T) {
	got := splitSQL("-- header; with a semicolon\nCREATE TABLE a (x INT);\n\n  -- indented comment\nCREATE INDEX i ON a (x)\n;\n")
	want := []string{"CREATE TABLE a (x INT)", "CREATE INDEX i ON a (x)"}
	if !slices.Equal(got, want) {
		t.Errorf("splitSQL = %q, want %q", got, want)
	}
}

func TestRebind(t *testing.T) {
	q := "SELECT a FROM t WHERE b = ? AND c IN (?, ?)"
	if got := postgresDialect.q(q); got != "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)" {
		t.Errorf("postgres: %s", got)
	}
	if got := mysqlDialect.q(q); got != q {
		t.Errorf("mysql: %s", got)
	}
}

func TestClean(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 10, "plain"},
		{"plain", 0, "plain"},
		{"abcdef", 3, "abc"},
		{"ééé", 2, "éé"},          // characters, not bytes
		{"ab\x00c", 0, "abc"},     // PostgreSQL refuses NUL
		{"a\xffb", 0, "a\uFFFDb"}, // invalid UTF-8 replaced
		{"\xff\xff\xffxyz", 2, "\uFFFDx"},
	} {
		if got := clean(c.in, c.max); got != c.want {
			t.Errorf("clean(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
	if err := checkIdent("x", strings.Repeat("é", maxName), maxName); err != nil {
		t.Errorf("checkIdent at the limit: %v", err)
	}
	if err := checkIdent("x", strings.Repeat("é", maxName+1), maxName); err == nil {
		t.Error("checkIdent over the limit: nil")
	}
}

// TestChunkSizes checks that the prepared INSERT sizes cover every batch
// size exactly, largest statements first.
func TestChunkSizes(t *testing.T) {
	for i := 1; i < len(insertSizes); i++ {
		if insertSizes[i] != insertSizes[i-1]/2 {
			t.Fatalf("insertSizes %v: want halving powers of two", insertSizes)
		}
	}
	if insertSizes[len(insertSizes)-1] != 1 {
		t.Fatalf("insertSizes %v: want it to end in 1", insertSizes)
	}
	for n := 0; n <= 1000; n++ {
		sum, prev := 0, 0
		for _, i := range chunkSizes(n) {
			if i < prev {
				t.Fatalf("chunkSizes(%d) = %v: not largest first", n, chunkSizes(n))
			}
			prev = i
			sum += insertSizes[i]
		}
		if sum != n {
			t.Fatalf("chunkSizes(%d) covers %d rows", n, sum)
		}
	}
	if got := len(chunkSizes(200)); got != 3 {
		t.Errorf("200 rows take %d statements, want 3 (128+64+8)", got)
	}
}

// TestSQLitePragmas: every pooled connection of a SQLite store runs with
// the settings sqliteParams promises (a DSN key the driver ignored would
// leave its default silently: synchronous FULL, temp_store FILE).
func TestSQLitePragmas(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, "sqlite", t.TempDir()+"/p.db")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db := s.(*sqlStore).db
	for q, want := range map[string]int{
		"PRAGMA temp_store":   2, // MEMORY
		"PRAGMA synchronous":  1, // NORMAL
		"PRAGMA busy_timeout": 10000,
		"PRAGMA page_size":    16384, // the file is new
	} {
		var got int
		if err := db.QueryRowContext(ctx, q).Scan(&got); err != nil || got != want {
			t.Errorf("%s = %d (%v), want %d", q, got, err, want)
		}
	}
}

// TestSQLiteBatchInsertKeepsRowsBeforeAFailure: the SQLite log batch INSERT
// runs without a statement journal (dialect.insertLogs): when its second
// row fails, the first stays in the transaction. A plain INSERT would undo
// it, which is what needs the journal.
func TestSQLiteBatchInsertKeepsRowsBeforeAFailure(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, "sqlite", t.TempDir()+"/f.db")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ss := s.(*sqlStore)
	good := LogRow{Time: time.UnixMilli(1_000), RequestID: "kept", Token: "t", Channel: "c", Model: "m"}
	args := appendLogArgs(nil, &good)
	bad := appendLogArgs(nil, &good)
	bad[0] = nil // ts is NOT NULL
	args = append(args, bad...)

	tx, err := ss.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, ss.insertLogsSQL(2), args...); err == nil {
		t.Fatal("a row with a NULL ts was inserted")
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM request_logs WHERE request_id = 'kept'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d rows before the failing one are left in the transaction, want 1: the statement was rolled back, so it kept a statement journal", n)
	}
}
