package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
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
	// LockAccount runs fn on the account's row while holding the row's
	// claim, so one refresh at a time runs for an account across every
	// instance on the database; others wait for the claim to end. fn runs
	// outside any transaction (it calls the provider). When fn returns a
	// row with write set, it is stored (version + 1) only if the claim is
	// still the caller's, and the claim ends with that write. found is
	// false for a missing row; a missing row is never created here.
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
	// ClaimedUntil is when a refresh's claim on the row lapses, zero when
	// none is held (read by ListAccounts only): some instance is
	// refreshing the account until then, or until it writes back.
	ClaimedUntil time.Time
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

// writeAccount replaces the row of a, with version a.Version + 1. It ends
// a refresh's claim: the refresh's result is for the credential replaced.
func (s *sqlStore) writeAccount(ctx context.Context, tx *sql.Tx, a Account, now int64) error {
	_, err := tx.ExecContext(ctx, s.d.q(`UPDATE accounts SET provider = ?, credential = ?, subject_fp = ?, access_expires_ms = ?,
 last_refresh_ms = ?, state = ?, reason = ?, exhausted_until_ms = ?, quota = ?, version = ?, updated_ms = ?,
 claim = '', claimed_until_ms = 0 WHERE channel = ? AND account = ?`),
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
	rows, err := s.db.QueryContext(ctx, "SELECT "+accountColumns+", claim, claimed_until_ms FROM accounts ORDER BY channel, account")
	if err != nil {
		return nil, fmt.Errorf("store: list accounts: %w", err)
	}
	defer rows.Close()
	var out []Account
	for rows.Next() {
		var holder string
		var until int64
		a, err := scanAccount(scanTail{rows, []any{&holder, &until}})
		if err != nil {
			return nil, fmt.Errorf("store: list accounts: %w", err)
		}
		if holder != "" {
			a.ClaimedUntil = fromMillisOrZero(until)
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

// accountClaim bounds how long a refresh holds its account's claim. It
// is longer than the refresh's own HTTP timeout (engine/account: 30 s),
// so a live holder writes back before anyone may take the claim over; a
// holder that died frees the account after it.
const accountClaim = 90 * time.Second

// claimPoll is how often an instance waiting for another's claim looks
// again. The wait is rare (two instances refreshing one account at once)
// and short (one token request).
const claimPoll = 100 * time.Millisecond

// errClaimLost is a claim that ended before its holder wrote back: a
// sign-in or sign-out replaced the row, or the holder outlived
// accountClaim.
var errClaimLost = errors.New("store: the account changed during its refresh (signed in again, signed out, or the refresh outlived its claim); its result was not stored")

// LockAccount implements Store. The row is claimed in a short
// transaction (claim, claimed_until_ms), fn runs outside any transaction
// (it makes a network call, and on SQLite a transaction held over it
// would block every other write of the database, request logs first),
// and its result is written in a second short transaction only while the
// claim is still ours. Another caller meanwhile waits for the claim to
// end, then reads what was written.
func (s *sqlStore) LockAccount(ctx context.Context, channel, account string, fn func(Account, bool) (Account, bool, error)) error {
	claim, err := newClaim()
	if err != nil {
		return err
	}
	a, found, err := s.claimAccount(ctx, channel, account, claim)
	if err != nil {
		return err
	}
	out, write, err := fn(a, found)
	if !found {
		return err
	}
	// Written or released even when ctx ended during fn: the claim must
	// not outlive the call, and a rotated token must not be lost.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err != nil || !write {
		if _, rerr := s.db.ExecContext(wctx, s.d.q("UPDATE accounts SET claim = '', claimed_until_ms = 0 WHERE channel = ? AND account = ? AND claim = ?"),
			channel, account, claim); rerr != nil && err == nil {
			err = fmt.Errorf("store: release account: %w", rerr)
		}
		return err
	}
	res, err := s.db.ExecContext(wctx, s.d.q(`UPDATE accounts SET provider = ?, credential = ?, subject_fp = ?, access_expires_ms = ?,
 last_refresh_ms = ?, state = ?, reason = ?, exhausted_until_ms = ?, quota = ?, version = version + 1, updated_ms = ?,
 claim = '', claimed_until_ms = 0 WHERE channel = ? AND account = ? AND claim = ?`),
		out.Provider, out.Credential, out.SubjectFP, millisOrZero(out.AccessExpires), millisOrZero(out.LastRefresh), out.State,
		clean(out.Reason, maxReason), millisOrZero(out.ExhaustedUntil), out.Quota, millis(time.Now()), channel, account, claim)
	if err != nil {
		return fmt.Errorf("store: write account: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return errClaimLost
	}
	return nil
}

// claimAccount waits until no one else holds the account's claim, then
// takes it; it returns the row as it was when claimed.
func (s *sqlStore) claimAccount(ctx context.Context, channel, account, claim string) (Account, bool, error) {
	for {
		var a Account
		var found, busy bool
		err := s.withTx(ctx, func(tx *sql.Tx) error {
			var holder string
			var until int64
			row := tx.QueryRowContext(ctx, s.d.q("SELECT "+accountColumns+", claim, claimed_until_ms FROM accounts WHERE channel = ? AND account = ?"+s.d.forUpdate()), channel, account)
			var err error
			a, err = scanAccount(scanTail{row, []any{&holder, &until}})
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			found = true
			now := millis(time.Now())
			if holder != "" && until > now {
				busy = true
				return nil
			}
			_, err = tx.ExecContext(ctx, s.d.q("UPDATE accounts SET claim = ?, claimed_until_ms = ? WHERE channel = ? AND account = ?"),
				claim, now+accountClaim.Milliseconds(), channel, account)
			return err
		})
		if err != nil {
			return Account{}, false, fmt.Errorf("store: claim account: %w", err)
		}
		if !busy {
			return a, found, nil
		}
		select {
		case <-ctx.Done():
			return Account{}, false, fmt.Errorf("store: claim account: %w", ctx.Err())
		case <-time.After(claimPoll):
		}
	}
}

// scanTail scans a row whose first columns are accountColumns into the
// account and the rest into tail.
type scanTail struct {
	row  interface{ Scan(...any) error }
	tail []any
}

func (s scanTail) Scan(dest ...any) error { return s.row.Scan(append(dest, s.tail...)...) }

func newClaim() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
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
