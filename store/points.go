package store

import (
	"context"
	"fmt"
	"time"
)

// LogPoint is the part of a request_logs row that time series and rankings
// need (the admin API's /admin/stats): no text beyond the three names.
type LogPoint struct {
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
	rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT ts, token, channel, model, status, ttfb_ms, duration_ms,
 input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost
 FROM request_logs WHERE ts >= ? AND ts < ? ORDER BY ts, id`), millis(since), millis(until))
	if err != nil {
		return fmt.Errorf("store: log points: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p LogPoint
		var ts int64
		if err := rows.Scan(&ts, &p.Token, &p.Channel, &p.Model, &p.Status, &p.TTFBMs, &p.DurationMs,
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
