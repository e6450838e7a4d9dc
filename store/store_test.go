package store_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ccload/ccload/store"
)

// Environment variables of the integration runs. CI sets all three.
const (
	envPostgres   = "CCLOAD_TEST_POSTGRES"
	envMySQL      = "CCLOAD_TEST_MYSQL"
	envRequireDBs = "CCLOAD_REQUIRE_DBS"
)

// TestSQLite runs the suite on SQLite files whose directory does not exist
// yet, as on a first start with the default `dsn: data/ccload.db`.
func TestSQLite(t *testing.T) {
	t.Parallel()
	h := &harness{driver: "sqlite", create: func(t *testing.T) (string, error) {
		return filepath.Join(t.TempDir(), "not", "yet", "ccload.db"), nil
	}}
	RunSuite(t, h.open)
}

// TestPostgres runs the suite on PostgreSQL, each subtest in a fresh schema
// (selected through search_path) that is dropped afterwards.
func TestPostgres(t *testing.T) {
	t.Parallel()
	base := integrationDSN(t, envPostgres, "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	h := &harness{driver: "postgres", create: func(t *testing.T) (string, error) {
		name := uniqueName()
		if err := adminExec(t, "pgx", base, "CREATE SCHEMA "+name, "DROP SCHEMA IF EXISTS "+name+" CASCADE"); err != nil {
			return "", err
		}
		return withSearchPath(base, name)
	}}
	RunSuite(t, h.open)
}

// TestMySQL runs the suite on MySQL or MariaDB, each subtest in a fresh
// database that is dropped afterwards.
func TestMySQL(t *testing.T) {
	t.Parallel()
	base := integrationDSN(t, envMySQL, "root@tcp(127.0.0.1:3306)/test")
	h := &harness{driver: "mysql", create: func(t *testing.T) (string, error) {
		name := uniqueName()
		if err := adminExec(t, "mysql", base, "CREATE DATABASE "+name, "DROP DATABASE IF EXISTS "+name); err != nil {
			return "", err
		}
		cfg, err := mysql.ParseDSN(base)
		if err != nil {
			return "", err
		}
		cfg.DBName = name
		return cfg.FormatDSN(), nil
	}}
	RunSuite(t, h.open)
}

// integrationDSN returns the DSN in env. Without one the test is skipped,
// loudly, or fails when CCLOAD_REQUIRE_DBS=1 (CI), so that a CI run can
// never pass without having tested every dialect.
func integrationDSN(t *testing.T, env, example string) string {
	t.Helper()
	if dsn := os.Getenv(env); dsn != "" {
		return dsn
	}
	msg := "*** " + env + " is not set: this dialect's conformance suite did NOT run. " +
		"To run it: " + env + "='" + example + "' go test ./store/ ***"
	if os.Getenv(envRequireDBs) == "1" {
		t.Fatal(msg + " (" + envRequireDBs + "=1 makes this a failure)")
	}
	t.Skip(msg)
	return ""
}

// harness implements Opener: one database per test, created on first use.
type harness struct {
	driver string
	// create makes an empty database for t, registers its removal with
	// t.Cleanup, and returns its DSN.
	create func(t *testing.T) (string, error)

	mu   sync.Mutex
	dsns map[*testing.T]string
}

func (h *harness) open(t *testing.T) store.Store {
	h.mu.Lock()
	dsn, ok := h.dsns[t]
	if !ok {
		var err error
		if dsn, err = h.create(t); err != nil {
			h.mu.Unlock()
			t.Errorf("create %s test database: %v", h.driver, err)
			return nil
		}
		if h.dsns == nil {
			h.dsns = map[*testing.T]string{}
		}
		h.dsns[t] = dsn
	}
	h.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := store.Open(ctx, h.driver, dsn)
	if err != nil {
		t.Errorf("Open(%s): %v", h.driver, err)
		return nil
	}
	t.Cleanup(func() { s.Close() }) // runs before the database is dropped
	return s
}

// uniqueName returns a schema or database name no other run uses, so that
// parallel packages and CI reruns never collide.
func uniqueName() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "ccload_t_" + hex.EncodeToString(b)
}

// adminExec runs create on the server at dsn and registers drop with
// t.Cleanup.
func adminExec(t testing.TB, driver, dsn, create, drop string) error {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := db.ExecContext(ctx, create); err != nil {
		db.Close()
		return err
	}
	t.Cleanup(func() {
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := db.ExecContext(ctx, drop); err != nil {
			t.Errorf("cleanup %q: %v", drop, err)
		}
	})
	return nil
}

// withSearchPath adds search_path to a PostgreSQL URL or key=value DSN.
func withSearchPath(dsn, schema string) (string, error) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " search_path=" + schema, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func TestOpenSQLiteCreatesDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	s, err := store.Open(context.Background(), "sqlite", filepath.Join(dir, "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(filepath.Join(dir, "x.db")); err != nil {
		t.Errorf("database file: %v", err)
	}
	if s.Driver() != "sqlite" {
		t.Errorf("Driver() = %q", s.Driver())
	}
	// WAL is a property of the file: a plain connection sees it too.
	raw, err := sql.Open("sqlite", filepath.Join(dir, "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var mode string
	if err := raw.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

func TestOpenSQLiteMemory(t *testing.T) {
	s, err := store.Open(context.Background(), "sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.InsertLogs(context.Background(), makeRows(3)); err != nil {
		t.Fatal(err)
	}
	if got := allLogs(t, s); len(got) != 3 {
		t.Errorf("%d rows, want 3", len(got))
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ driver, dsn, want string }{
		{"oracle", "x", `unknown driver "oracle"`},
		{"sqlite3", "x.db", "want one of mysql, postgres, sqlite"},
		{"sqlite", "  ", "empty dsn"},
		{"postgres", "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=1", "connect postgres"},
	} {
		s, err := store.Open(ctx, c.driver, c.dsn)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q, %q) succeeded", c.driver, c.dsn)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%q, %q) = %v; want it to mention %q", c.driver, c.dsn, err, c.want)
		}
	}
}

// BenchmarkInsertLogs measures batches of the Writer's default size on each
// dialect (PostgreSQL and MySQL only when their DSN is set). Results before
// and after prepared multi-row statements are in BENCH.md.
func BenchmarkInsertLogs(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		benchInsertLogs(b, "sqlite", filepath.Join(b.TempDir(), "bench.db"))
	})
	b.Run("postgres", func(b *testing.B) {
		base := os.Getenv(envPostgres)
		if base == "" {
			b.Skip(envPostgres + " is not set")
		}
		name := uniqueName()
		if err := adminExec(b, "pgx", base, "CREATE SCHEMA "+name, "DROP SCHEMA IF EXISTS "+name+" CASCADE"); err != nil {
			b.Fatal(err)
		}
		dsn, err := withSearchPath(base, name)
		if err != nil {
			b.Fatal(err)
		}
		benchInsertLogs(b, "postgres", dsn)
	})
	b.Run("mysql", func(b *testing.B) {
		base := os.Getenv(envMySQL)
		if base == "" {
			b.Skip(envMySQL + " is not set")
		}
		name := uniqueName()
		if err := adminExec(b, "mysql", base, "CREATE DATABASE "+name, "DROP DATABASE IF EXISTS "+name); err != nil {
			b.Fatal(err)
		}
		cfg, err := mysql.ParseDSN(base)
		if err != nil {
			b.Fatal(err)
		}
		cfg.DBName = name
		benchInsertLogs(b, "mysql", cfg.FormatDSN())
	})
}

func benchInsertLogs(b *testing.B, driver, dsn string) {
	s, err := store.Open(context.Background(), driver, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	batch := makeRows(200) // BENCH.md's numbers are per 200 rows
	span := batch[len(batch)-1].Time.Sub(batch[0].Time) + time.Second
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		// Each batch later than the last, as the Writer's are: the same
		// times again would insert into the middle of the ts index, which
		// doubled a row's cost on SQLite (store/BENCH.md, "What a SQLite row costs").
		for i := range batch {
			batch[i].Time = batch[i].Time.Add(span)
		}
		if err := s.InsertLogs(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "rows/s")
}
