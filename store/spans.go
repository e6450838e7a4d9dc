package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Log spans stand in for SQLite's token, channel and model indexes on
// request_logs. Maintaining those three B-tree indexes was about a third
// of a log row's CPU on SQLite (BENCH.md), and SQLite runs in the gateway's own
// process, so under load that was a visible share of ccload's CPU per
// request. A span says "rows with this value of this field lie
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

// logSpan is one request_log_spans row.
type logSpan struct {
	spanKey
	lo, hi int64
}

// spanSet collects the spans of one batch; a nil *spanSet (a dialect
// without spans) ignores every call.
type spanSet struct {
	st      *sql.Stmt       // the prepared span INSERT
	spans   []logSpan       // in the order first seen, so what is written is deterministic
	at      map[spanKey]int // index into spans
	pending [][3]string     // the spanValues of the rows of the INSERT being built
}

// newSpanSet returns the spanSet of a batch, nil if the dialect keeps no
// spans. It prepares the span INSERT, outside the batch's transaction as
// stmts.go's prepared requires.
func (s *sqlStore) newSpanSet(ctx context.Context) (*spanSet, error) {
	if !s.d.logSpans {
		return nil, nil
	}
	st, err := s.prepared(ctx, &s.stmts.span, func() string {
		return "INSERT INTO request_log_spans (field, value, lo_id, hi_id) VALUES (?, ?, ?, ?)"
	})
	if err != nil {
		return nil, err
	}
	return &spanSet{st: st, at: make(map[spanKey]int)}, nil
}

// spanValues are r's values of spanFields, in their order. r is the
// cleaned row, whose values are the ones stored.
func spanValues(r *LogRow) [3]string { return [3]string{r.Token, r.Channel, r.Model} }

// add records that the cleaned row r was written with ID id.
func (ss *spanSet) add(r *LogRow, id int64) {
	if ss != nil {
		ss.addValues(spanValues(r), id)
	}
}

func (ss *spanSet) addValues(vals [3]string, id int64) {
	for f, v := range vals {
		if v == "" {
			continue // QueryLogs never filters on an empty value
		}
		k := spanKey{field: f, value: v, block: id / spanIDs}
		i, ok := ss.at[k]
		if !ok {
			ss.at[k] = len(ss.spans)
			ss.spans = append(ss.spans, logSpan{spanKey: k, lo: id, hi: id})
			continue
		}
		sp := &ss.spans[i]
		sp.lo, sp.hi = min(sp.lo, id), max(sp.hi, id)
	}
}

// pend notes the cleaned row r, the next row of the multi-row INSERT being
// built; addPending gives it its ID once the INSERT has run.
func (ss *spanSet) pend(r *LogRow) {
	if ss != nil {
		ss.pending = append(ss.pending, spanValues(r))
	}
}

// addPending adds the rows pended since the last call, which one multi-row
// INSERT wrote with result res. Only for SQLite: one statement's rows take
// consecutive IDs there, the last one LastInsertId's.
func (ss *spanSet) addPending(res sql.Result) error {
	if ss == nil {
		return nil
	}
	last, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("log spans: %w", err)
	}
	first := last - int64(len(ss.pending)) + 1
	for j, vals := range ss.pending {
		ss.addValues(vals, first+int64(j))
	}
	ss.pending = ss.pending[:0]
	return nil
}

// write inserts the spans, inside the batch's transaction.
func (ss *spanSet) write(ctx context.Context, tx *sql.Tx) error {
	if ss == nil {
		return nil
	}
	stmt := tx.StmtContext(ctx, ss.st)
	for _, sp := range ss.spans {
		if _, err := stmt.ExecContext(ctx, spanFields[sp.field], sp.value, sp.lo, sp.hi); err != nil {
			return fmt.Errorf("log spans: %w", err)
		}
	}
	return nil
}

// spanFilter returns the field (and its value) QueryLogs walks the spans
// of, or ok false if q filters on none of them or the dialect has no spans.
func (s *sqlStore) spanFilter(q LogQuery) (field, value string, ok bool) {
	if !s.d.logSpans {
		return "", "", false
	}
	for i, v := range spanValues(&LogRow{Token: q.Token, Channel: q.Channel, Model: q.Model}) {
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
