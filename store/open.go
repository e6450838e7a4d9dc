package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql" // driver "mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"
	_ "modernc.org/sqlite"             // driver "sqlite"
)

// sqlStore is the Store of every dialect: one *sql.DB and the dialect's SQL.
type sqlStore struct {
	db    *sql.DB
	d     dialect
	stmts stmts
}

// sqliteParams are appended to every SQLite DSN. Parameters the operator
// already set in the DSN come first and win (the driver reads the first).
//   - busy_timeout: writers from other connections and processes wait
//     instead of failing with SQLITE_BUSY.
//   - synchronous=NORMAL: with WAL (set by sqliteWAL, not here), durable
//     across a process crash, which is what request logs need.
//   - _txlock=immediate: transactions take the write lock at BEGIN, so two
//     transactions never deadlock upgrading a read lock.
//   - temp_store=memory: each multi-row INSERT of a log batch opens a
//     statement journal, a temp file by default; pages went to it with a
//     pwrite each, ~3% of a busy gateway's CPU (perf). In memory
//     it costs a copy; it holds at most one statement's changed pages.
//   - page_size=16384: each page a commit changes is a WAL frame written
//     with two pwrites, and written again by the checkpoint. A 200-row log
//     batch took 260 pwrites on 4 KiB pages and 94 on 16 KiB ones, 8% less
//     time (store/BENCH.md); 64 KiB pages gained less. It takes effect only
//     in a database being created: an existing file keeps its page size.
const sqliteParams = "_busy_timeout=10000&_synchronous=NORMAL&_txlock=immediate&_pragma=temp_store(memory)&_pragma=page_size(16384)"

// Open connects to the database, creating a SQLite file and its directory
// when missing, and applies the embedded migrations. driver is "sqlite",
// "mysql" or "postgres"; dsn is a file path (or file: URI) for SQLite, a
// go-sql-driver DSN ("user:pass@tcp(host:3306)/db") for MySQL, and a
// PostgreSQL URL or key=value string for PostgreSQL.
func Open(ctx context.Context, driver, dsn string) (Store, error) {
	d, err := dialectFor(driver, dsn)
	if err != nil {
		return nil, err
	}
	memory := false
	if d.name == sqliteDialect.name {
		if dsn, memory, err = prepareSQLite(dsn); err != nil {
			return nil, err
		}
	}

	db, err := sql.Open(d.sqlDriver, dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", driver, err)
	}
	switch {
	case memory:
		// Every connection to ":memory:" is a different database.
		db.SetMaxOpenConns(1)
	case d.name == sqliteDialect.name:
		// Writes are serialised by SQLite anyway; a few connections let
		// readers (dashboard queries) run beside the writer.
		db.SetMaxOpenConns(8)
		db.SetMaxIdleConns(8)
	default:
		// Stay well inside a shared server's max_connections when several
		// instances connect; drop connections before proxies or the
		// server's wait_timeout do.
		db.SetMaxOpenConns(16)
		db.SetMaxIdleConns(8)
		db.SetConnMaxLifetime(30 * time.Minute)
		db.SetConnMaxIdleTime(5 * time.Minute)
	}

	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: connect %s: %w", driver, err)
	}
	if d.name == sqliteDialect.name && !memory {
		if err := sqliteWAL(ctx, db); err != nil {
			db.Close()
			return nil, err
		}
	}
	if err := migrate(ctx, db, d); err != nil {
		db.Close()
		return nil, err
	}
	return &sqlStore{db: db, d: d}, nil
}

// dialectFor checks the settings that no wait can fix: a known driver and a
// DSN that is not empty.
func dialectFor(driver, dsn string) (dialect, error) {
	d, ok := dialects[driver]
	if !ok {
		names := make([]string, 0, len(dialects))
		for n := range dialects {
			names = append(names, n)
		}
		slices.Sort(names)
		return dialect{}, fmt.Errorf("store: unknown driver %q (want one of %s)", driver, strings.Join(names, ", "))
	}
	if strings.TrimSpace(dsn) == "" {
		return dialect{}, fmt.Errorf("store: %s: empty dsn", driver)
	}
	return d, nil
}

// prepareSQLite creates the database file's directory and returns the DSN
// with sqliteParams added, and whether the database lives in memory.
func prepareSQLite(dsn string) (string, bool, error) {
	file, query, _ := strings.Cut(dsn, "?")
	file = strings.TrimPrefix(file, "file:")
	memory := file == ":memory:" || file == "" || strings.Contains(query, "mode=memory")
	if !memory {
		if dir := filepath.Dir(file); dir != "." {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return "", false, fmt.Errorf("store: sqlite: create directory: %w", err)
			}
		}
		// The file holds request logs and cooldowns: owner only.
		// SQLite gives its -wal and -shm files the mode of this one.
		f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return "", false, fmt.Errorf("store: sqlite: create file: %w", err)
		}
		// An existing file keeps the mode it was made with (a copy, an
		// older release, a umask): tighten it too.
		err = f.Chmod(0o600)
		f.Close()
		if err != nil {
			return "", false, fmt.Errorf("store: sqlite: make the file owner-only: %w", err)
		}
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + sqliteParams, memory, nil
}

// sqliteWAL switches the database file to write-ahead logging, so that
// readers do not block the writer. The mode is kept in the file, so it is not
// a per-connection DSN parameter: when several processes open a new file at
// once, the switch fails with SQLITE_BUSY without waiting on busy_timeout,
// and such a failure in the DSN would fail the connection. Here it is retried.
func sqliteWAL(ctx context.Context, db *sql.DB) error {
	const patience = 10 * time.Second
	deadline := time.Now().Add(patience)
	for {
		var mode string
		err := db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode)
		if err == nil && strings.EqualFold(mode, "wal") {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("journal mode is still %q", mode)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("store: sqlite: enable WAL for %s: %w", patience, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("store: sqlite: enable WAL: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Ping implements Store.
func (s *sqlStore) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Driver implements Store.
func (s *sqlStore) Driver() string { return s.d.name }

// Close implements Store.
func (s *sqlStore) Close() error {
	s.stmts.close()
	return s.db.Close()
}

// withTx runs fn in a transaction and commits it when fn returns nil.
func (s *sqlStore) withTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
