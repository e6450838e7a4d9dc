package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Accounts are the subscription accounts of oauth channels (design §9).
// The store never sees a credential in the clear: Credential is sealed by
// the caller (engine/account) before it gets here.
type Accounts interface {
	// PutAccount creates or replaces an account (a sign-in), bumping its
	// version so every instance polling ListAccounts picks it up.
	PutAccount(ctx context.Context, a Account) error
	// DeleteAccount removes an account (a sign-out); a missing one is not
	// an error. It reports whether a row was deleted.
	DeleteAccount(ctx context.Context, channel, account string) (bool, error)
	// ListAccounts returns every account, ordered by channel and account.
	ListAccounts(ctx context.Context) ([]Account, error)
	// LockAccount runs fn on the account's row inside a transaction that
	// holds the row's write lock (SELECT … FOR UPDATE on PostgreSQL and
	// MySQL; SQLite's single writer), so one refresh at a time runs for an
	// account across every instance on the database. When fn returns a
	// row with write set, it is stored (version + 1) before the lock is
	// released, in the same transaction. found is false for a missing row;
	// a missing row is never created here.
	LockAccount(ctx context.Context, channel, account string, fn func(a Account, found bool) (out Account, write bool, err error)) error
	// SetAccountQuota stores what the provider's usage headers said
	// (quota windows as JSON, the exhausted-until time; zero clears it),
	// without touching the credential.
	SetAccountQuota(ctx context.Context, channel, account string, exhaustedUntil time.Time, quota string) error
	// AccountUsage sums the request logs since a time by the account that
	// served them (key fingerprint "account:NAME"), keyed by channel and
	// account name.
	AccountUsage(ctx context.Context, since time.Time) (map[[2]string]AccountUse, error)
}

// AccountUse is the requests an account served and their cost.
type AccountUse struct {
	Requests int64
	Cost     float64
}

// Account is one row of accounts.
type Account struct {
	Channel, Account string
	Provider         string // config.OAuthCodex | config.OAuthXAI
	// Credential is the sealed credential (engine/account.Seal): nonce and
	// AES-256-GCM ciphertext. Never printed.
	Credential []byte
	// SubjectFP is a fingerprint of the provider's account id, for display.
	SubjectFP      string
	AccessExpires  time.Time // zero: unknown (a token without expiry)
	LastRefresh    time.Time
	State          string // AccountOK | AccountInvalid
	Reason         string // why invalid, as the provider said
	ExhaustedUntil time.Time
	Quota          string // JSON of the quota windows last seen
	Version        int64
	Updated        time.Time
}

// Account states as stored. "refreshing" and "exhausted" are not stored
// states: the first is a lock held, the second ExhaustedUntil in the
// future.
const (
	AccountOK      = "ok"
	AccountInvalid = "invalid"
)

const accountColumns = "channel, account, provider, credential, subject_fp, access_expires_ms, last_refresh_ms, state, reason, exhausted_until_ms, quota, version, updated_ms"

func checkAccountID(channel, account string) error {
	if err := checkIdent("account channel", channel, maxName); err != nil {
		return err
	}
	return checkIdent("account name", account, maxName)
}

// PutAccount implements Store.
func (s *sqlStore) PutAccount(ctx context.Context, a Account) error {
	if err := checkAccountID(a.Channel, a.Account); err != nil {
		return err
	}
	if a.State == "" {
		a.State = AccountOK
	}
	now := millis(time.Now())
	return s.withTx(ctx, func(tx *sql.Tx) error {
		var version int64
		err := tx.QueryRowContext(ctx, s.d.q("SELECT version FROM accounts WHERE channel = ? AND account = ?"+s.d.forUpdate()), a.Channel, a.Account).Scan(&version)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.ExecContext(ctx, s.d.q("INSERT INTO accounts ("+accountColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
				a.Channel, a.Account, a.Provider, a.Credential, a.SubjectFP, millisOrZero(a.AccessExpires), millisOrZero(a.LastRefresh),
				a.State, clean(a.Reason, maxReason), millisOrZero(a.ExhaustedUntil), a.Quota, 1, now)
		case err == nil:
			a.Version = version
			err = s.writeAccount(ctx, tx, a, now)
		}
		if err != nil {
			return fmt.Errorf("store: put account: %w", err)
		}
		return nil
	})
}

// writeAccount replaces the row of a, with version a.Version + 1.
func (s *sqlStore) writeAccount(ctx context.Context, tx *sql.Tx, a Account, now int64) error {
	_, err := tx.ExecContext(ctx, s.d.q(`UPDATE accounts SET provider = ?, credential = ?, subject_fp = ?, access_expires_ms = ?,
 last_refresh_ms = ?, state = ?, reason = ?, exhausted_until_ms = ?, quota = ?, version = ?, updated_ms = ?
 WHERE channel = ? AND account = ?`),
		a.Provider, a.Credential, a.SubjectFP, millisOrZero(a.AccessExpires), millisOrZero(a.LastRefresh), a.State,
		clean(a.Reason, maxReason), millisOrZero(a.ExhaustedUntil), a.Quota, a.Version+1, now, a.Channel, a.Account)
	return err
}

// DeleteAccount implements Store.
func (s *sqlStore) DeleteAccount(ctx context.Context, channel, account string) (bool, error) {
	res, err := s.db.ExecContext(ctx, s.d.q("DELETE FROM accounts WHERE channel = ? AND account = ?"), channel, account)
	if err != nil {
		return false, fmt.Errorf("store: delete account: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// ListAccounts implements Store.
func (s *sqlStore) ListAccounts(ctx context.Context) ([]Account, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+accountColumns+" FROM accounts ORDER BY channel, account")
	if err != nil {
		return nil, fmt.Errorf("store: list accounts: %w", err)
	}
	defer rows.Close()
	var out []Account
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list accounts: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func scanAccount(r interface{ Scan(...any) error }) (Account, error) {
	var a Account
	var expires, refreshed, exhausted, updated int64
	err := r.Scan(&a.Channel, &a.Account, &a.Provider, &a.Credential, &a.SubjectFP, &expires, &refreshed,
		&a.State, &a.Reason, &exhausted, &a.Quota, &a.Version, &updated)
	a.AccessExpires, a.LastRefresh = fromMillisOrZero(expires), fromMillisOrZero(refreshed)
	a.ExhaustedUntil, a.Updated = fromMillisOrZero(exhausted), fromMillis(updated)
	return a, err
}

// millisOrZero stores the zero time as 0 (never, unknown).
func millisOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return millis(t)
}

func fromMillisOrZero(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return fromMillis(ms)
}

// LockAccount implements Store.
func (s *sqlStore) LockAccount(ctx context.Context, channel, account string, fn func(Account, bool) (Account, bool, error)) error {
	return s.withTx(ctx, func(tx *sql.Tx) error {
		a, err := scanAccount(tx.QueryRowContext(ctx, s.d.q("SELECT "+accountColumns+" FROM accounts WHERE channel = ? AND account = ?"+s.d.forUpdate()), channel, account))
		found := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: lock account: %w", err)
		}
		out, write, err := fn(a, found)
		if err != nil || !write || !found {
			return err
		}
		out.Channel, out.Account, out.Version = channel, account, a.Version
		if err := s.writeAccount(ctx, tx, out, millis(time.Now())); err != nil {
			return fmt.Errorf("store: write account: %w", err)
		}
		return nil
	})
}

// SetAccountQuota implements Store.
func (s *sqlStore) SetAccountQuota(ctx context.Context, channel, account string, exhaustedUntil time.Time, quota string) error {
	_, err := s.db.ExecContext(ctx, s.d.q("UPDATE accounts SET exhausted_until_ms = ?, quota = ?, version = version + 1, updated_ms = ? WHERE channel = ? AND account = ?"),
		millisOrZero(exhaustedUntil), quota, millis(time.Now()), channel, account)
	if err != nil {
		return fmt.Errorf("store: set account quota: %w", err)
	}
	return nil
}

// forUpdate ends a SELECT that takes the row's write lock. SQLite has no
// row locks: ccload opens its transactions with BEGIN IMMEDIATE
// (_txlock=immediate), which takes the database's one write lock at once.
func (d dialect) forUpdate() string {
	if d.name == sqliteDialect.name {
		return ""
	}
	return " FOR UPDATE"
}

// AccountUsage implements Store. It reads the rows of the period by their
// time index; accounts' key fingerprints start with "account:".
func (s *sqlStore) AccountUsage(ctx context.Context, since time.Time) (map[[2]string]AccountUse, error) {
	rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT channel, key_fp, COUNT(*), COALESCE(SUM(cost), 0) FROM request_logs
 WHERE ts >= ? AND key_fp LIKE 'account:%' GROUP BY channel, key_fp`), millis(since))
	if err != nil {
		return nil, fmt.Errorf("store: account usage: %w", err)
	}
	defer rows.Close()
	out := map[[2]string]AccountUse{}
	for rows.Next() {
		var ch, fp string
		var u AccountUse
		if err := rows.Scan(&ch, &fp, &u.Requests, &u.Cost); err != nil {
			return nil, fmt.Errorf("store: account usage: %w", err)
		}
		out[[2]string{ch, strings.TrimPrefix(fp, "account:")}] = u
	}
	return out, rows.Err()
}
