package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// usageKey is one usage_daily row's identity.
type usageKey struct{ day, token, channel, model string }

// addUsage adds rows to usage_daily inside tx, with prepared, the upsert
// prepared on the database. The rows are summed per key
// first, so a batch costs one upsert per key rather than per row, and the
// upserts run in key order, so two instances writing overlapping batches lock
// rows in the same order and cannot deadlock each other.
func (s *sqlStore) addUsage(ctx context.Context, tx *sql.Tx, prepared *sql.Stmt, rows []LogRow) error {
	sums := map[usageKey]*UsageDay{}
	for i := range rows {
		r := &rows[i]
		// The names as the log rows store them (cleanLog).
		k := usageKey{dayOf(r.Time), clean(r.Token, maxName), clean(r.Channel, maxName), clean(r.Model, maxName)}
		if k.channel == "" {
			// No upstream saw it (refused, or nothing could serve it), so
			// it has no tokens and no cost, and its model is whatever the
			// client wrote: counted under no model, a token's refusals
			// add one row a day, however many names they make up. The
			// log row keeps the name.
			k.model = ""
		}
		u := sums[k]
		if u == nil {
			u = &UsageDay{Day: k.day, Token: k.token, Channel: k.channel, Model: k.model}
			sums[k] = u
		}
		u.Requests++
		if r.IsError() {
			u.Errors++
		}
		u.InputTokens += r.InputTokens
		u.OutputTokens += r.OutputTokens
		u.CacheReadTokens += r.CacheReadTokens
		u.CacheWriteTokens += r.CacheWriteTokens
		u.Cost += finite(r.Cost)
	}
	keys := make([]usageKey, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b usageKey) int {
		return cmp.Or(cmp.Compare(a.day, b.day), cmp.Compare(a.token, b.token),
			cmp.Compare(a.channel, b.channel), cmp.Compare(a.model, b.model))
	})

	stmt := tx.StmtContext(ctx, prepared)
	defer stmt.Close()
	for _, k := range keys {
		u := sums[k]
		if _, err := stmt.ExecContext(ctx, u.Day, u.Token, u.Channel, u.Model, u.Requests, u.Errors,
			u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.Cost); err != nil {
			return fmt.Errorf("usage_daily: %w", err)
		}
	}
	return nil
}

// TokenCost implements Store.
func (s *sqlStore) TokenCost(ctx context.Context, token string) (float64, error) {
	var cost sql.NullFloat64
	err := s.db.QueryRowContext(ctx, s.d.q("SELECT SUM(cost) FROM usage_daily WHERE token = ?"), token).Scan(&cost)
	if err != nil {
		return 0, fmt.Errorf("store: token cost: %w", err)
	}
	return cost.Float64, nil
}

// ChannelCostOn implements Store.
func (s *sqlStore) ChannelCostOn(ctx context.Context, channel string, day string) (float64, error) {
	if err := checkDay(day); err != nil {
		return 0, err
	}
	var cost sql.NullFloat64
	err := s.db.QueryRowContext(ctx, s.d.q("SELECT SUM(cost) FROM usage_daily WHERE channel = ? AND day = ?"),
		channel, day).Scan(&cost)
	if err != nil {
		return 0, fmt.Errorf("store: channel cost: %w", err)
	}
	return cost.Float64, nil
}

// UsageDaily implements Store.
func (s *sqlStore) UsageDaily(ctx context.Context, since string) ([]UsageDay, error) {
	if since != "" {
		if err := checkDay(since); err != nil {
			return nil, err
		}
	}
	rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT day, token, channel, model, requests, errors,
 input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost
 FROM usage_daily WHERE day >= ? ORDER BY day, token, channel, model`), since)
	if err != nil {
		return nil, fmt.Errorf("store: usage daily: %w", err)
	}
	defer rows.Close()
	var out []UsageDay
	for rows.Next() {
		var u UsageDay
		if err := rows.Scan(&u.Day, &u.Token, &u.Channel, &u.Model, &u.Requests, &u.Errors,
			&u.InputTokens, &u.OutputTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &u.Cost); err != nil {
			return nil, fmt.Errorf("store: usage daily: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: usage daily: %w", err)
	}
	return out, nil
}
