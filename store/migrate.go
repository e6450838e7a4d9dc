package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// migrationFS holds migrations/NNNN_name.DIALECT.sql. Every version must
// exist for every dialect (TestMigrationsComplete checks it).
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one embedded file for one dialect.
type migration struct {
	version int
	name    string
	stmts   []string
}

// postgresMigrateLock is the pg_advisory_xact_lock key ("ccload" in ASCII).
// Advisory locks are per database, not per schema, so two schemas of one
// database migrate one after the other, which is harmless.
const postgresMigrateLock int64 = 0x63636c6f6164

// mysqlMigrateLock is the GET_LOCK name; such locks are server-wide.
const mysqlMigrateLock = "ccload_migrate"

const createSchemaMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
 version INTEGER NOT NULL PRIMARY KEY,
 name VARCHAR(255) NOT NULL,
 applied_ms BIGINT NOT NULL)`

// loadMigrations returns the dialect's migrations in version order.
func loadMigrations(dialectName string) ([]migration, error) {
	names, err := fs.Glob(migrationFS, "migrations/*."+dialectName+".sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, file := range names {
		base := strings.TrimSuffix(path.Base(file), "."+dialectName+".sql")
		num, name, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("store: migration file %s: want NNNN_name.%s.sql", file, dialectName)
		}
		body, err := migrationFS.ReadFile(file)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, stmts: splitSQL(string(body))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("store: two %s migrations with version %d", dialectName, out[i].version)
		}
	}
	return out, nil
}

// splitSQL drops whole-line "--" comments and splits the rest on ";". The
// migration files follow the matching rule: no semicolon inside a statement.
func splitSQL(body string) []string {
	var kept []string
	for line := range strings.Lines(body) {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			kept = append(kept, line)
		}
	}
	var stmts []string
	for stmt := range strings.SplitSeq(strings.Join(kept, ""), ";") {
		if stmt = strings.TrimSpace(stmt); stmt != "" {
			stmts = append(stmts, stmt)
		}
	}
	return stmts
}

// sqlExecer is what migrations run on: a transaction, or for MySQL a
// connection holding the migration lock.
type sqlExecer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// migrate applies the dialect's missing migrations. Several processes may
// call it at once on one database: each dialect serialises them before
// reading schema_migrations, so each migration runs exactly once.
//
//   - SQLite: one BEGIN IMMEDIATE transaction (the DSN sets _txlock), which
//     takes the write lock; the others wait for it through busy_timeout.
//   - PostgreSQL: one transaction (DDL is transactional) that first takes an
//     advisory transaction lock.
//   - MySQL: DDL commits implicitly, so there is no transaction; a GET_LOCK
//     held on one connection serialises instances, and each statement is
//     idempotent so that a migration interrupted halfway can run again.
func migrate(ctx context.Context, db *sql.DB, d dialect) error {
	migs, err := loadMigrations(d.name)
	if err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()

	if d.name == mysqlDialect.name {
		var got sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 60)", mysqlMigrateLock).Scan(&got); err != nil {
			return fmt.Errorf("store: migration lock: %w", err)
		}
		if got.Int64 != 1 {
			return errors.New("store: migration lock: another instance held it for 60s")
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK(?)", mysqlMigrateLock)
		return applyMigrations(ctx, conn, d, migs)
	}

	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if d.name == postgresDialect.name {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", postgresMigrateLock); err != nil {
			return fmt.Errorf("store: migration lock: %w", err)
		}
	}
	if err := applyMigrations(ctx, tx, d, migs); err != nil {
		return err
	}
	return tx.Commit()
}

// applyMigrations runs, in order, every migration not yet recorded in
// schema_migrations, and records it.
func applyMigrations(ctx context.Context, ex sqlExecer, d dialect, migs []migration) error {
	if _, err := ex.ExecContext(ctx, createSchemaMigrations); err != nil {
		return fmt.Errorf("store: create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := ex.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return fmt.Errorf("store: read schema_migrations: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return err
		}
		applied[v] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}

	for _, m := range migs {
		if applied[m.version] {
			continue
		}
		for i, stmt := range m.stmts {
			if _, err := ex.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("store: migration %04d_%s.%s.sql statement %d: %w", m.version, m.name, d.name, i+1, err)
			}
		}
		if _, err := ex.ExecContext(ctx, d.q("INSERT INTO schema_migrations (version, name, applied_ms) VALUES (?, ?, ?)"),
			m.version, m.name, millis(time.Now())); err != nil {
			return fmt.Errorf("store: record migration %d: %w", m.version, err)
		}
	}
	return nil
}

// SchemaVersion implements Store.
func (s *sqlStore) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	if err := s.db.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&v); err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return int(v.Int64), nil
}
