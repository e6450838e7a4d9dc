package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Log spans stand in for SQLite's token, channel and model indexes on
// request_logs. Maintaining three B-tree indexes cost about 4 µs of a log
// row's 13–15 on SQLite (BENCH.md), and SQLite runs in the gateway's own
// process, so under load that was a visible share of ccload's CPU per
// request (issue 12). A span says "rows with this value of this field lie
// between these two IDs": the Writer records one per value per batch, a
// few dozen rows per 500 log rows, and QueryLogs walks a value's spans
// newest first and reads only the log rows inside them.
//
// The walk is exact and needs no sort because a value's spans never
// overlap: SQLite writes one transaction at a time and IDs only grow
// (AUTOINCREMENT), so every span of a later batch lies above every span of
// an earlier one. PostgreSQL and MySQL keep their indexes: their IDs come
// from sequences that concurrent instances interleave, and their index
// upkeep runs in the database server, not in ccload.

// spanIDs bounds a span: lo and hi lie in one block of spanIDs IDs
// (id / spanIDs is equal), so hi-lo < spanIDs. QueryLogs' BeforeID cursor
// relies on it to skip the newer spans by index range.
const spanIDs = 1024

// spanFields are the request_logs columns that have spans, in the order
// QueryLogs prefers them when a query filters on several.
var spanFields = [...]string{"token", "channel", "model"}

// spanKey identifies one span being built: a field (index into
// spanFields), a value, and the ID block.
type spanKey struct {
	field int
	value string
	block int64
}

// spanSet collects the spans of one batch. The zero value is ready.
type spanSet struct {
	m     map[spanKey][2]int64
	order []spanKey // insertion order, so the rows written are deterministic
}

// spanValues are r's values of spanFields, in their order. r is the
// cleaned row, whose values are the ones stored.
func spanValues(r *LogRow) [3]string { return [3]string{r.Token, r.Channel, r.Model} }

// add records that a log row with these spanValues was written with ID id.
func (ss *spanSet) add(vals [3]string, id int64) {
	for f, v := range vals {
		if v == "" {
			continue // QueryLogs never filters on an empty value
		}
		k := spanKey{field: f, value: v, block: id / spanIDs}
		if ss.m == nil {
			ss.m = make(map[spanKey][2]int64)
		}
		lh, ok := ss.m[k]
		if !ok {
			ss.order = append(ss.order, k)
			lh = [2]int64{id, id}
		}
		lh[0], lh[1] = min(lh[0], id), max(lh[1], id)
		ss.m[k] = lh
	}
}

// addChunk adds the rows of one multi-row INSERT, given their spanValues
// in order. Only for SQLite: one statement's rows take consecutive IDs
// there, the last one LastInsertId's.
func (ss *spanSet) addChunk(res sql.Result, names [][3]string) error {
	last, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("log spans: %w", err)
	}
	first := last - int64(len(names)) + 1
	for j, vals := range names {
		ss.add(vals, first+int64(j))
	}
	return nil
}

// write inserts the spans, inside the batch's transaction.
func (ss *spanSet) write(ctx context.Context, tx *sql.Tx, st *sql.Stmt) error {
	stmt := tx.StmtContext(ctx, st)
	for _, k := range ss.order {
		lh := ss.m[k]
		if _, err := stmt.ExecContext(ctx, spanFields[k.field], k.value, lh[0], lh[1]); err != nil {
			return fmt.Errorf("log spans: %w", err)
		}
	}
	return nil
}

// spanStmt returns the prepared request_log_spans INSERT.
func (s *sqlStore) spanStmt(ctx context.Context) (*sql.Stmt, error) {
	return s.prepared(ctx, &s.stmts.span, func() string {
		return "INSERT INTO request_log_spans (field, value, lo_id, hi_id) VALUES (?, ?, ?, ?)"
	})
}

// spanFilter returns the field (and its value) QueryLogs walks the spans
// of, or ok false if q filters on none of them or the dialect has no spans.
func (s *sqlStore) spanFilter(q LogQuery) (field, value string, ok bool) {
	if !s.d.logSpans {
		return "", "", false
	}
	for i, v := range [...]string{q.Token, q.Channel, q.Model} {
		if v != "" {
			return spanFields[i], v, true
		}
	}
	return "", "", false
}

// spanQuery is QueryLogs' statement when it walks spans: where holds the
// query's conditions on request_logs, each starting with its column name
// unqualified ("ts >= ?"), which spanQuery qualifies with the alias l;
// args are their arguments.
func spanQuery(field, value string, where []string, args []any, beforeID int64, limit int) (string, []any) {
	var b strings.Builder
	b.WriteString("SELECT l.id")
	for _, c := range logColumns {
		b.WriteString(", l.")
		b.WriteString(c)
	}
	// CROSS JOIN keeps the spans the outer loop: SQLite then reads them
	// newest first through their primary key and each one's log rows by
	// rowid range, both in descending order, with no sort (TestSpanQueryPlan).
	b.WriteString(" FROM request_log_spans s CROSS JOIN request_logs l WHERE s.field = ? AND s.value = ?")
	all := []any{field, value}
	if beforeID > 0 {
		// A span holding IDs below the cursor starts below it; one that
		// ends spanIDs or more above it starts above it too (spanIDs).
		b.WriteString(" AND s.hi_id < ? AND s.lo_id < ?")
		all = append(all, beforeID+spanIDs, beforeID)
	}
	b.WriteString(" AND l.id BETWEEN s.lo_id AND s.hi_id")
	for _, w := range where {
		b.WriteString(" AND l.")
		b.WriteString(w)
	}
	all = append(all, args...)
	fmt.Fprintf(&b, " ORDER BY s.hi_id DESC, l.id DESC LIMIT %d", limit)
	return b.String(), all
}

// pruneSpans deletes the spans below the oldest log row left; the others
// may still hold rows.
func (s *sqlStore) pruneSpans(ctx context.Context) error {
	if !s.d.logSpans {
		return nil
	}
	_, err := s.db.ExecContext(ctx, `DELETE FROM request_log_spans
 WHERE hi_id < COALESCE((SELECT MIN(id) FROM request_logs), 9223372036854775807)`)
	return err
}
