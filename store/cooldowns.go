package store

import (
	"context"
	"fmt"
	"time"
)

// checkKey validates a cooldown key: a known scope and parts that fit their
// columns exactly (a key cut to fit would no longer match the engine's).
func checkKey(k CooldownKey) error {
	switch k.Scope {
	case ScopeKey, ScopeModel, ScopeURL, ScopeChannel:
	default:
		return fmt.Errorf("store: cooldown scope %q: want key, model, url or channel", k.Scope)
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{
		{"cooldown channel", k.Channel, maxName},
		{"cooldown key fingerprint", k.KeyFP, maxKeyFP},
		{"cooldown model", k.Model, maxName},
		{"cooldown url", k.URL, maxURL},
	} {
		if err := checkIdent(f.name, f.v, f.max); err != nil {
			return err
		}
	}
	return nil
}

// UpsertCooldown implements Store.
func (s *sqlStore) UpsertCooldown(ctx context.Context, c Cooldown) error {
	if err := checkKey(c.CooldownKey); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, s.d.q(s.d.upsertCooldown),
		c.Scope, c.Channel, c.KeyFP, c.Model, c.URL,
		millis(c.Until), c.Strikes, clean(c.Kind, maxProtocol), clean(c.Reason, maxReason),
		millis(time.Now()))
	if err != nil {
		return fmt.Errorf("store: upsert cooldown: %w", err)
	}
	return nil
}

// DeleteCooldown implements Store.
func (s *sqlStore) DeleteCooldown(ctx context.Context, k CooldownKey) error {
	if err := checkKey(k); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, s.d.q(
		"DELETE FROM cooldowns WHERE scope = ? AND channel = ? AND key_fp = ? AND model = ? AND url = ?"),
		k.Scope, k.Channel, k.KeyFP, k.Model, k.URL)
	if err != nil {
		return fmt.Errorf("store: delete cooldown: %w", err)
	}
	return nil
}

// ListCooldowns implements Store.
func (s *sqlStore) ListCooldowns(ctx context.Context, now time.Time) ([]Cooldown, error) {
	rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT scope, channel, key_fp, model, url, until_ms, strikes, kind, reason
 FROM cooldowns WHERE until_ms > ? ORDER BY scope, channel, key_fp, model, url`), millis(now))
	if err != nil {
		return nil, fmt.Errorf("store: list cooldowns: %w", err)
	}
	defer rows.Close()
	var out []Cooldown
	for rows.Next() {
		var c Cooldown
		var until int64
		if err := rows.Scan(&c.Scope, &c.Channel, &c.KeyFP, &c.Model, &c.URL, &until, &c.Strikes, &c.Kind, &c.Reason); err != nil {
			return nil, fmt.Errorf("store: list cooldowns: %w", err)
		}
		c.Until = fromMillis(until)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list cooldowns: %w", err)
	}
	return out, nil
}
