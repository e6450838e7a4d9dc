package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Sessions are the admin API's login sessions, kept in the database so that
// every instance sharing it accepts them and a logout on one ends them on
// all. The store sees only hashes: the session token itself is
// never written.
type Sessions interface {
	// CreateSession stores a new session. A second session with the same
	// ID is an error.
	CreateSession(ctx context.Context, s AdminSession) error
	// Session returns the session with id; ok is false when there is none.
	// Expired sessions are returned too: the caller compares Expires with
	// its own clock.
	Session(ctx context.Context, id string) (s AdminSession, ok bool, err error)
	// DeleteSession removes the session with id; a missing one is not an
	// error.
	DeleteSession(ctx context.Context, id string) error
	// PruneSessions deletes the sessions that expired before now and
	// returns how many.
	PruneSessions(ctx context.Context, now time.Time) (int64, error)
}

// AdminSession is one row of admin_sessions.
type AdminSession struct {
	ID          string // hex sha256 of the session token
	PasswordTag string // hex sha256 binding the token to the admin password it was opened with
	Created     time.Time
	Expires     time.Time
}

// maxSessionHash is the length of both hex digests.
const maxSessionHash = 64

// CreateSession implements Store.
func (s *sqlStore) CreateSession(ctx context.Context, se AdminSession) error {
	if err := checkIdent("session id", se.ID, maxSessionHash); err != nil {
		return err
	}
	if err := checkIdent("session password tag", se.PasswordTag, maxSessionHash); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, s.d.q(
		"INSERT INTO admin_sessions (id_sha256, password_tag, created_ms, expires_ms) VALUES (?, ?, ?, ?)"),
		se.ID, se.PasswordTag, millis(se.Created), millis(se.Expires))
	if err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	return nil
}

// Session implements Store.
func (s *sqlStore) Session(ctx context.Context, id string) (AdminSession, bool, error) {
	se := AdminSession{ID: id}
	var created, expires int64
	err := s.db.QueryRowContext(ctx, s.d.q(
		"SELECT password_tag, created_ms, expires_ms FROM admin_sessions WHERE id_sha256 = ?"), id).
		Scan(&se.PasswordTag, &created, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return AdminSession{}, false, nil
	case err != nil:
		return AdminSession{}, false, fmt.Errorf("store: read session: %w", err)
	}
	se.Created, se.Expires = fromMillis(created), fromMillis(expires)
	return se, true, nil
}

// DeleteSession implements Store.
func (s *sqlStore) DeleteSession(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, s.d.q("DELETE FROM admin_sessions WHERE id_sha256 = ?"), id); err != nil {
		return fmt.Errorf("store: delete session: %w", err)
	}
	return nil
}

// PruneSessions implements Store.
func (s *sqlStore) PruneSessions(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.d.q("DELETE FROM admin_sessions WHERE expires_ms <= ?"), millis(now))
	if err != nil {
		return 0, fmt.Errorf("store: prune sessions: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
