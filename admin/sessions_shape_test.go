package admin

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/store"
)

// countingSessions is a session store that holds nothing and counts reads.
type countingSessions struct{ reads int }

func (c *countingSessions) CreateSession(context.Context, store.AdminSession) error { return nil }
func (c *countingSessions) Session(context.Context, string) (store.AdminSession, bool, error) {
	c.reads++
	return store.AdminSession{}, false, nil
}
func (c *countingSessions) DeleteSession(context.Context, string) error { return nil }
func (c *countingSessions) PruneSessions(context.Context, time.Time) (int64, error) {
	return 0, nil
}

// A cookie that create could not have made (wrong length, not lower-case
// hex) is refused without a database read: anyone can send cookies, and
// each read is a query against the shared database.
func TestSessionCookieOfTheWrongShapeCostsNoRead(t *testing.T) {
	st := &countingSessions{}
	ss := newSessions(st, time.Hour, slog.New(slog.DiscardHandler))
	now := time.Unix(1_700_000_000, 0)
	var pw [32]byte
	for _, bad := range []string{
		"",
		"abc",
		strings.Repeat("a", 63),
		strings.Repeat("a", 65),
		strings.Repeat("A", 64),
		strings.Repeat("a", 63) + "g",
		strings.Repeat("a", 60) + "'--\x00",
	} {
		if ss.valid(bad, now, pw) {
			t.Errorf("cookie %q accepted", bad)
		}
	}
	if st.reads != 0 {
		t.Errorf("malformed cookies cost %d database reads, want 0", st.reads)
	}
	// A cookie of the right shape is looked up (once: the answer is cached).
	good := strings.Repeat("0123456789abcdef", 4)
	ss.valid(good, now, pw)
	ss.valid(good, now, pw)
	if st.reads != 1 {
		t.Errorf("a well-formed unknown cookie cost %d reads, want 1", st.reads)
	}
}
