package store

import (
	"context"
	"fmt"
	"time"
)

func checkOverride(kind, target string) error {
	if kind == "" {
		return fmt.Errorf("store: override kind is empty")
	}
	if err := checkIdent("override kind", kind, maxOverKind); err != nil {
		return err
	}
	return checkIdent("override target", target, maxTarget)
}

// SetOverride implements Store.
func (s *sqlStore) SetOverride(ctx context.Context, o Override) error {
	if err := checkOverride(o.Kind, o.Target); err != nil {
		return err
	}
	if o.CreatedAt.IsZero() {
		o.CreatedAt = time.Now()
	}
	_, err := s.db.ExecContext(ctx, s.d.q(s.d.upsertOverride), o.Kind, o.Target, clean(o.Value, 0), millis(o.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: set override: %w", err)
	}
	return nil
}

// DeleteOverride implements Store.
func (s *sqlStore) DeleteOverride(ctx context.Context, kind, target string) error {
	if err := checkOverride(kind, target); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, s.d.q("DELETE FROM overrides WHERE kind = ? AND target = ?"), kind, target)
	if err != nil {
		return fmt.Errorf("store: delete override: %w", err)
	}
	return nil
}

// ListOverrides implements Store.
func (s *sqlStore) ListOverrides(ctx context.Context) ([]Override, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT kind, target, value, created_ms FROM overrides ORDER BY kind, target")
	if err != nil {
		return nil, fmt.Errorf("store: list overrides: %w", err)
	}
	defer rows.Close()
	var out []Override
	for rows.Next() {
		var o Override
		var created int64
		if err := rows.Scan(&o.Kind, &o.Target, &o.Value, &created); err != nil {
			return nil, fmt.Errorf("store: list overrides: %w", err)
		}
		o.CreatedAt = fromMillis(created)
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list overrides: %w", err)
	}
	return out, nil
}
