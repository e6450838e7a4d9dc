package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// logColumns are the request_logs columns written by InsertLogs, in the
// order of logArgs and after "id" in scanLog.
var logColumns = []string{
	"ts", "request_id", "token", "channel", "key_fp", "url",
	"client_protocol", "upstream_protocol", "model", "upstream_model",
	"status", "failure_kind", "failure_scope", "attempts", "attempts_json",
	"ttfb_ms", "duration_ms", "input_tokens", "output_tokens",
	"cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
	"cost", "stream", "incomplete", "client_ip", "error_msg", "unpriced",
}

// appendLogArgs appends r's values in the order of logColumns, each of a
// type database/sql passes to the driver as it is (an int would go through
// its reflection-based conversion, for every row of every batch).
func appendLogArgs(args []any, r *LogRow) []any {
	return append(args,
		millis(r.Time), r.RequestID, r.Token, r.Channel, r.KeyFP, r.URL,
		r.ClientProtocol, r.UpstreamProtocol, r.Model, r.UpstreamModel,
		int64(r.Status), r.FailureKind, r.FailureScope, int64(r.Attempts), storedAttempts(r),
		r.TTFBMs, r.DurationMs, r.InputTokens, r.OutputTokens,
		r.CacheReadTokens, r.CacheWriteTokens, r.ReasoningTokens,
		r.Cost, r.Stream, r.Incomplete, r.ClientIP, r.Error, r.Unpriced,
	)
}

func scanLog(rows *sql.Rows) (LogRow, error) {
	var r LogRow
	var ts int64
	err := rows.Scan(&r.ID,
		&ts, &r.RequestID, &r.Token, &r.Channel, &r.KeyFP, &r.URL,
		&r.ClientProtocol, &r.UpstreamProtocol, &r.Model, &r.UpstreamModel,
		&r.Status, &r.FailureKind, &r.FailureScope, &r.Attempts, &r.AttemptsJSON,
		&r.TTFBMs, &r.DurationMs, &r.InputTokens, &r.OutputTokens,
		&r.CacheReadTokens, &r.CacheWriteTokens, &r.ReasoningTokens,
		&r.Cost, &r.Stream, &r.Incomplete, &r.ClientIP, &r.Error, &r.Unpriced)
	r.Time = fromMillis(ts)
	readAttempts(&r)
	return r, err
}

// InsertLogs implements Store.
func (s *sqlStore) InsertLogs(ctx context.Context, rows []LogRow) error {
	if len(rows) == 0 {
		return nil
	}
	runs := splitRuns(rows)
	// Prepare before BEGIN: preparing takes a connection of its own, and an
	// in-memory SQLite database has only the one the transaction holds.
	prepErr := func(err error) error { return fmt.Errorf("store: insert %d logs: prepare: %w", len(rows), err) }
	var one, debug *sql.Stmt
	for i := range runs {
		rn := &runs[i]
		if rn.debug {
			if one == nil {
				var err error
				if one, err = s.insertOneStmt(ctx); err != nil {
					return prepErr(err)
				}
				if debug, err = s.debugStmt(ctx); err != nil {
					return prepErr(err)
				}
			}
			continue
		}
		for _, si := range chunkSizes(len(rn.rows)) {
			st, err := s.insertStmt(ctx, si)
			if err != nil {
				return prepErr(err)
			}
			rn.sizes = append(rn.sizes, insertSizes[si])
			rn.stmts = append(rn.stmts, st)
		}
	}
	usage, err := s.usageStmt(ctx)
	if err != nil {
		return prepErr(err)
	}
	spans, err := s.newSpanSet(ctx)
	if err != nil {
		return prepErr(err)
	}
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		args := make([]any, 0, min(len(rows), insertSizes[0])*len(logColumns))
		for _, rn := range runs {
			if rn.debug {
				r := cleanLog(rn.rows[0])
				id, err := s.insertWithDebug(ctx, tx, one, debug, &r)
				if err != nil {
					return err
				}
				spans.add(&r, id)
				continue
			}
			start := 0
			for n, size := range rn.sizes {
				chunk := rn.rows[start : start+size]
				start += size
				args = args[:0]
				for j := range chunk {
					// Cleaned one at a time on the stack: a cleaned copy of
					// the batch was 190 KB per 500 rows for the collector.
					r := cleanLog(chunk[j])
					args = appendLogArgs(args, &r)
					spans.pend(&r)
				}
				res, err := tx.StmtContext(ctx, rn.stmts[n]).ExecContext(ctx, args...)
				if err != nil {
					return err
				}
				if err := spans.addPending(res); err != nil {
					return err
				}
			}
		}
		if err := spans.write(ctx, tx); err != nil {
			return err
		}
		return s.addUsage(ctx, tx, usage, rows)
	})
	if err != nil {
		return fmt.Errorf("store: insert %d logs: %w", len(rows), err)
	}
	return nil
}

// logRun is a stretch of a batch inserted one way: plain rows by multi-row
// INSERTs of the given sizes, or one row with a debug capture, whose ID
// request_debug needs.
type logRun struct {
	rows  []LogRow
	debug bool
	sizes []int
	stmts []*sql.Stmt
}

// splitRuns cuts rows into runs in their order, so that IDs keep following
// the batch order (QueryLogs' "newest first" is ID order). A batch without
// captures, the usual case, is one run.
func splitRuns(rows []LogRow) []logRun {
	var runs []logRun
	start := 0
	for i := range rows {
		if rows[i].Debug == "" {
			continue
		}
		if i > start {
			runs = append(runs, logRun{rows: rows[start:i]})
		}
		runs = append(runs, logRun{rows: rows[i : i+1], debug: true})
		start = i + 1
	}
	if start < len(rows) {
		runs = append(runs, logRun{rows: rows[start:]})
	}
	return runs
}

// insertWithDebug inserts one log row and its capture, and returns the
// row's ID.
func (s *sqlStore) insertWithDebug(ctx context.Context, tx *sql.Tx, one, debug *sql.Stmt, r *LogRow) (int64, error) {
	args := appendLogArgs(make([]any, 0, len(logColumns)), r)
	var id int64
	if s.d.returningID {
		if err := tx.StmtContext(ctx, one).QueryRowContext(ctx, args...).Scan(&id); err != nil {
			return 0, err
		}
	} else {
		res, err := tx.StmtContext(ctx, one).ExecContext(ctx, args...)
		if err != nil {
			return 0, err
		}
		if id, err = res.LastInsertId(); err != nil {
			return 0, err
		}
	}
	_, err := tx.StmtContext(ctx, debug).ExecContext(ctx, id, millis(r.Time), r.Debug)
	return id, err
}

// GetLog implements Store.
func (s *sqlStore) GetLog(ctx context.Context, id int64) (LogRow, error) {
	query := "SELECT id, " + strings.Join(logColumns, ", ") + " FROM request_logs WHERE id = ?"
	rows, err := s.db.QueryContext(ctx, s.d.q(query), id)
	if err != nil {
		return LogRow{}, fmt.Errorf("store: get log %d: %w", id, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return LogRow{}, fmt.Errorf("store: get log %d: %w", id, err)
		}
		return LogRow{}, ErrLogNotFound
	}
	r, err := scanLog(rows)
	if err != nil {
		return LogRow{}, fmt.Errorf("store: get log %d: %w", id, err)
	}
	rows.Close()
	err = s.db.QueryRowContext(ctx, s.d.q("SELECT capture FROM request_debug WHERE log_id = ?"), id).Scan(&r.Debug)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return LogRow{}, fmt.Errorf("store: get log %d: debug capture: %w", id, err)
	}
	return r, nil
}

// QueryLogs implements Store.
func (s *sqlStore) QueryLogs(ctx context.Context, q LogQuery) ([]LogRow, error) {
	if q.StatusClass < 0 || q.StatusClass > 5 {
		return nil, fmt.Errorf("store: status class %d: want 0 or 1–5", q.StatusClass)
	}
	var where []string
	var args []any
	add := func(cond string, arg any) {
		where = append(where, cond)
		args = append(args, arg)
	}
	if !q.Since.IsZero() {
		add("ts >= ?", millis(q.Since))
	}
	if !q.Until.IsZero() {
		add("ts < ?", millis(q.Until))
	}
	if q.Token != "" {
		add("token = ?", q.Token)
	}
	if q.Channel != "" {
		add("channel = ?", q.Channel)
	}
	if q.Model != "" {
		add("model = ?", q.Model)
	}
	if q.FailureScope != "" {
		add("failure_scope = ?", q.FailureScope)
	}
	if q.StatusClass != 0 {
		add("status >= ?", q.StatusClass*100)
		add("status < ?", q.StatusClass*100+100)
	}
	if q.BeforeID > 0 {
		add("id < ?", q.BeforeID)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLogLimit
	}
	limit = min(limit, MaxLogLimit)

	// "Newest" is the highest ID, that is insertion order: for one instance
	// it is time order (the Writer keeps rows in order, even across retries),
	// and it keeps BeforeID a stable cursor while new rows arrive.
	var query string
	if field, value, ok := s.spanFilter(q); ok {
		query, args = spanQuery(field, value, where, args, q.BeforeID, limit)
	} else {
		var b strings.Builder
		b.WriteString("SELECT id, ")
		b.WriteString(strings.Join(logColumns, ", "))
		b.WriteString(" FROM request_logs")
		if len(where) > 0 {
			b.WriteString(" WHERE ")
			b.WriteString(strings.Join(where, " AND "))
		}
		fmt.Fprintf(&b, " ORDER BY id DESC LIMIT %d", limit)
		query = b.String()
	}

	rows, err := s.db.QueryContext(ctx, s.d.q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("store: query logs: %w", err)
	}
	defer rows.Close()
	out := make([]LogRow, 0, min(limit, 64))
	for rows.Next() {
		r, err := scanLog(rows)
		if err != nil {
			return nil, fmt.Errorf("store: query logs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: query logs: %w", err)
	}
	return out, nil
}

// PruneLogs implements Store.
func (s *sqlStore) PruneLogs(ctx context.Context, before time.Time) (int64, error) {
	// Captures first: a prune cut short leaves log rows without their
	// capture, never captures without their row.
	if _, err := s.pruneBatches(ctx, s.d.pruneDebug, before); err != nil {
		return 0, fmt.Errorf("store: prune debug captures: %w", err)
	}
	n, err := s.pruneBatches(ctx, s.d.pruneLogs, before)
	if err != nil {
		return n, fmt.Errorf("store: prune logs: %w", err)
	}
	if err := s.pruneSpans(ctx); err != nil {
		return n, fmt.Errorf("store: prune log spans: %w", err)
	}
	// usage_daily's rows of requests no upstream saw (addUsage) go with
	// the logs of their day: they hold no cost, so no cost limit reads
	// them. The rows with a channel stay: lifetime token costs are summed
	// from them.
	if _, err := s.db.ExecContext(ctx, s.d.q("DELETE FROM usage_daily WHERE channel = '' AND cost = 0 AND day < ?"), dayOf(before)); err != nil {
		return n, fmt.Errorf("store: prune usage of refused requests: %w", err)
	}
	return n, nil
}

// pruneBatches runs a prune statement (at most pruneBatch rows older than
// its one argument) until a run deletes fewer, and returns the total.
func (s *sqlStore) pruneBatches(ctx context.Context, stmt string, before time.Time) (int64, error) {
	query := s.d.q(stmt)
	var total int64
	for {
		res, err := s.db.ExecContext(ctx, query, millis(before))
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += n
		if n < pruneBatch {
			return total, nil
		}
	}
}
