package store

import (
	"context"
	"database/sql"
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

// appendLogArgs appends r's values in the order of logColumns.
func appendLogArgs(args []any, r *LogRow) []any {
	return append(args,
		millis(r.Time), r.RequestID, r.Token, r.Channel, r.KeyFP, r.URL,
		r.ClientProtocol, r.UpstreamProtocol, r.Model, r.UpstreamModel,
		r.Status, r.FailureKind, r.FailureScope, r.Attempts, r.AttemptsJSON,
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
	return r, err
}

// InsertLogs implements Store.
func (s *sqlStore) InsertLogs(ctx context.Context, rows []LogRow) error {
	if len(rows) == 0 {
		return nil
	}
	clean := make([]LogRow, len(rows))
	for i := range rows {
		clean[i] = cleanLog(rows[i])
	}
	// Prepare before BEGIN: preparing takes a connection of its own, and an
	// in-memory SQLite database has only the one the transaction holds.
	sizes := chunkSizes(len(clean))
	insertStmts := make([]*sql.Stmt, len(sizes))
	for n, i := range sizes {
		st, err := s.insertStmt(ctx, i)
		if err != nil {
			return fmt.Errorf("store: insert %d logs: prepare: %w", len(rows), err)
		}
		insertStmts[n] = st
	}
	usage, err := s.usageStmt(ctx)
	if err != nil {
		return fmt.Errorf("store: insert %d logs: prepare: %w", len(rows), err)
	}
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		args := make([]any, 0, min(len(clean), insertSizes[0])*len(logColumns))
		start := 0
		for n, i := range sizes {
			chunk := clean[start : start+insertSizes[i]]
			start += len(chunk)
			args = args[:0]
			for j := range chunk {
				args = appendLogArgs(args, &chunk[j])
			}
			if _, err := tx.StmtContext(ctx, insertStmts[n]).ExecContext(ctx, args...); err != nil {
				return err
			}
		}
		return s.addUsage(ctx, tx, usage, clean)
	})
	if err != nil {
		return fmt.Errorf("store: insert %d logs: %w", len(rows), err)
	}
	return nil
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

	var b strings.Builder
	b.WriteString("SELECT id, ")
	b.WriteString(strings.Join(logColumns, ", "))
	b.WriteString(" FROM request_logs")
	if len(where) > 0 {
		b.WriteString(" WHERE ")
		b.WriteString(strings.Join(where, " AND "))
	}
	// "Newest" is the highest ID, that is insertion order: for one instance
	// it is time order (the Writer keeps rows in order, even across retries),
	// and it keeps BeforeID a stable cursor while new rows arrive.
	fmt.Fprintf(&b, " ORDER BY id DESC LIMIT %d", limit)

	rows, err := s.db.QueryContext(ctx, s.d.q(b.String()), args...)
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
	query := s.d.q(s.d.pruneLogs)
	var total int64
	for {
		res, err := s.db.ExecContext(ctx, query, millis(before))
		if err != nil {
			return total, fmt.Errorf("store: prune logs: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("store: prune logs: %w", err)
		}
		total += n
		if n < pruneBatch {
			return total, nil
		}
	}
}
