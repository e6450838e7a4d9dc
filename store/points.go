package store

import (
	"context"
	"fmt"
	"time"
)

// LogPoint is the part of a request_logs row that time series and rankings
// need (the admin API's /admin/stats): no text beyond the three names.
type LogPoint struct {
	ID                        int64 // the row's id
	Time                      time.Time
	Token, Channel, Model     string
	Status                    int
	TTFBMs, DurationMs        int64
	InputTokens, OutputTokens int64
	CacheReadTokens           int64
	CacheWriteTokens          int64
	Cost                      float64
}

// IsError reports whether the request counts as an error, as LogRow.IsError.
func (p LogPoint) IsError() bool { return p.Status < 200 || p.Status >= 400 }

// EachLogPoint implements Store.
func (s *sqlStore) EachLogPoint(ctx context.Context, since, until time.Time, fn func(LogPoint) error) error {
	return s.eachPoint(ctx, `ts >= ? AND ts < ? ORDER BY ts, id`, fn, millis(since), millis(until))
}

// EachLogPointAfter implements Store.
//
// The query ranges over the primary key only and the time bounds are applied
// here: with them in SQL, planners (SQLite's at least) pick the ts index and
// read the whole window, which is what an incremental reader must avoid. Rows
// past the cursor are the few inserted since the previous call.
func (s *sqlStore) EachLogPointAfter(ctx context.Context, since, until time.Time, afterID int64, fn func(LogPoint) error) error {
	if afterID <= 0 {
		return s.eachPoint(ctx, `ts >= ? AND ts < ? ORDER BY id`, fn, millis(since), millis(until))
	}
	lo, hi := fromMillis(millis(since)), fromMillis(millis(until)) // SQL's millisecond bounds
	return s.eachPoint(ctx, `id > ? ORDER BY id`, func(p LogPoint) error {
		if p.Time.Before(lo) || !p.Time.Before(hi) {
			return nil
		}
		return fn(p)
	}, afterID)
}

// LogPointDigest implements Store.
func (s *sqlStore) LogPointDigest(ctx context.Context, since, until time.Time, maxID int64) (n, idSum int64, err error) {
	err = s.db.QueryRowContext(ctx, s.d.q(`SELECT COUNT(*), COALESCE(SUM(id), 0) FROM request_logs
 WHERE ts >= ? AND ts < ? AND id <= ?`), millis(since), millis(until), maxID).Scan(&n, &idSum)
	if err != nil {
		return 0, 0, fmt.Errorf("store: log point digest: %w", err)
	}
	return n, idSum, nil
}

func (s *sqlStore) eachPoint(ctx context.Context, where string, fn func(LogPoint) error, args ...any) error {
	rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT id, ts, token, channel, model, status, ttfb_ms, duration_ms,
 input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost
 FROM request_logs WHERE `+where), args...)
	if err != nil {
		return fmt.Errorf("store: log points: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p LogPoint
		var ts int64
		if err := rows.Scan(&p.ID, &ts, &p.Token, &p.Channel, &p.Model, &p.Status, &p.TTFBMs, &p.DurationMs,
			&p.InputTokens, &p.OutputTokens, &p.CacheReadTokens, &p.CacheWriteTokens, &p.Cost); err != nil {
			return fmt.Errorf("store: log points: %w", err)
		}
		p.Time = fromMillis(ts)
		if err := fn(p); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: log points: %w", err)
	}
	return nil
}
