package store

import "context"

// DebugCaptures counts the rows of request_debug, for suite tests that
// check pruning leaves no capture behind its row.
func DebugCaptures(ctx context.Context, s Store) (int64, error) {
	var n int64
	err := s.(*sqlStore).db.QueryRowContext(ctx, "SELECT COUNT(*) FROM request_debug").Scan(&n)
	return n, err
}
