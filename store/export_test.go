package store

import "context"

// ExecForTest runs one statement on the store's database, for tests that
// need to set up what the API cannot (undoing a migration).
func (s *sqlStore) ExecForTest(ctx context.Context, query string) error {
	_, err := s.db.ExecContext(ctx, query)
	return err
}
