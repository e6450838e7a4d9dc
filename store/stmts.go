package store

import (
	"context"
	"database/sql"
	"strings"
	"sync"
)

// insertSizes are the row counts of the prepared multi-row INSERT
// statements, largest first. InsertLogs cuts a batch greedily into them
// (200 rows = 128 + 64 + 8), so any batch below 256 rows takes at most eight
// statements and the store never prepares more than eight INSERTs, whatever
// sizes the Writer hands it. 128 rows of 28 columns is 3584 placeholders,
// far below every dialect's limit (SQLite 32766, MySQL and PostgreSQL 65535).
var insertSizes = [...]int{128, 64, 32, 16, 8, 4, 2, 1}

// stmts holds the statements InsertLogs prepares once per *sql.DB rather
// than once per call: parsing a 3584-placeholder INSERT is most of a batch's
// cost on SQLite, and the MySQL driver otherwise prepares and closes every
// statement it executes with arguments (three round trips for one).
// database/sql re-prepares a Stmt on each connection that runs it, also
// after a reconnect, so a database restart needs nothing here.
type stmts struct {
	mu     sync.Mutex
	insert [len(insertSizes)]*sql.Stmt
	usage  *sql.Stmt
	// insertID inserts one log row and returns its ID (returningID
	// dialects); debug inserts one request_debug row.
	insertID, debug *sql.Stmt
	span            *sql.Stmt // one request_log_spans row (spans.go)
}

// insertStmt returns the prepared INSERT for insertSizes[i] rows.
func (s *sqlStore) insertStmt(ctx context.Context, i int) (*sql.Stmt, error) {
	return s.prepared(ctx, &s.stmts.insert[i], func() string { return s.insertLogsSQL(insertSizes[i]) })
}

// usageStmt returns the prepared usage_daily upsert.
func (s *sqlStore) usageStmt(ctx context.Context) (*sql.Stmt, error) {
	return s.prepared(ctx, &s.stmts.usage, func() string { return s.d.q(s.d.upsertUsage) })
}

// insertOneStmt returns the statement that inserts one log row whose ID
// is needed: with RETURNING id where the driver has no LastInsertId.
func (s *sqlStore) insertOneStmt(ctx context.Context) (*sql.Stmt, error) {
	if !s.d.returningID {
		return s.insertStmt(ctx, len(insertSizes)-1)
	}
	return s.prepared(ctx, &s.stmts.insertID, func() string { return s.insertLogsSQL(1) + " RETURNING id" })
}

// debugStmt returns the prepared request_debug INSERT.
func (s *sqlStore) debugStmt(ctx context.Context) (*sql.Stmt, error) {
	return s.prepared(ctx, &s.stmts.debug, func() string {
		return s.d.q("INSERT INTO request_debug (log_id, ts, capture) VALUES (?, ?, ?)")
	})
}

// prepared returns *slot, preparing query into it on first use. A failed
// prepare (a database outage) leaves the slot empty for the next call.
// Call it outside a transaction: preparing takes a connection of its own.
func (s *sqlStore) prepared(ctx context.Context, slot **sql.Stmt, query func() string) (*sql.Stmt, error) {
	s.stmts.mu.Lock()
	defer s.stmts.mu.Unlock()
	if *slot != nil {
		return *slot, nil
	}
	st, err := s.db.PrepareContext(ctx, query())
	if err != nil {
		return nil, err
	}
	*slot = st
	return st, nil
}

// close closes every prepared statement; the store is closing.
func (st *stmts) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for i, p := range st.insert {
		if p != nil {
			p.Close()
			st.insert[i] = nil
		}
	}
	for _, p := range []**sql.Stmt{&st.usage, &st.insertID, &st.debug, &st.span} {
		if *p != nil {
			(*p).Close()
			*p = nil
		}
	}
}

// chunkSizes returns the indexes into insertSizes that cover n rows, largest
// first: statements of the largest size while they fit, then the set bits of
// what is left.
func chunkSizes(n int) []int {
	var out []int
	for n >= insertSizes[0] {
		out = append(out, 0)
		n -= insertSizes[0]
	}
	for i, size := range insertSizes {
		if n&size != 0 {
			out = append(out, i)
		}
	}
	return out
}

// insertLogsSQL returns the INSERT statement for n rows.
func (s *sqlStore) insertLogsSQL(n int) string {
	row := "(" + strings.Repeat("?, ", len(logColumns)-1) + "?)"
	var b strings.Builder
	b.Grow(64 + 16*len(logColumns) + n*(len(row)+2))
	b.WriteString(s.d.insertLogs)
	b.WriteString(" (")
	b.WriteString(strings.Join(logColumns, ", "))
	b.WriteString(") VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return s.d.q(b.String())
}
