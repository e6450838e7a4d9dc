package store

import "context"

// DebugCaptures counts the rows of request_debug, for suite tests that
// check pruning leaves no capture behind its row.
func DebugCaptures(ctx context.Context, s Store) (int64, error) {
	var n int64
	err := s.(*sqlStore).db.QueryRowContext(ctx, "SELECT COUNT(*) FROM request_debug").Scan(&n)
	return n, err
}

// ExecForTest runs one statement on the store's database, for tests that
// need to set up what the API cannot (undoing a migration).
func (s *sqlStore) ExecForTest(ctx context.Context, query string) error {
	_, err := s.db.ExecContext(ctx, query)
	return err
}

// StoredAttempts is the attempts_json column of row id as stored, for the
// suite test of the one-attempt case (attempts.go).
func StoredAttempts(ctx context.Context, s Store, id int64) (string, error) {
	var v string
	ss := s.(*sqlStore)
	err := ss.db.QueryRowContext(ctx, ss.d.q("SELECT attempts_json FROM request_logs WHERE id = ?"), id).Scan(&v)
	return v, err
}

// LogSpans counts the rows of request_log_spans (SQLite), for the tests of
// their upkeep.
func LogSpans(ctx context.Context, s Store) (int64, error) {
	var n int64
	err := s.(*sqlStore).db.QueryRowContext(ctx, "SELECT COUNT(*) FROM request_log_spans").Scan(&n)
	return n, err
}
