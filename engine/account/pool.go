package account

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/internal/oauth"
	"github.com/ccload/ccload/store"
)

// Pool holds the accounts of every oauth channel: the decrypted credential
// in memory, refreshed on demand, and the state routing needs. The
// database is the source of truth: Sync (every few seconds, Run) picks up
// sign-ins, sign-outs, and refreshes made by other processes.
type Pool struct {
	st    store.Accounts
	hc    *http.Client
	clock clock.Clock
	log   *slog.Logger
	key   atomic.Pointer[[]byte]

	mu sync.Mutex
	m  map[id]*entry

	// Refreshes counts refresh grants sent (tests and metrics).
	Refreshes atomic.Int64
}

type id struct{ channel, account string }

// entry is one account. mu serialises its refreshes in this process;
// the fields below it are guarded by st.
type entry struct {
	mu         sync.Mutex
	refreshing atomic.Bool

	st         sync.Mutex
	present    bool
	version    int64
	provider   string
	cred       Credential
	credErr    error
	invalid    string
	exhausted  time.Time
	quota      Quota
	refreshed  time.Time
	subject    string
	quotaSaved time.Time
}

// New makes a Pool over st. hc sends the refresh grants (nil: a client
// with a 30 s timeout).
func New(st store.Accounts, hc *http.Client, clk clock.Clock, log *slog.Logger) *Pool {
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	if clk == nil {
		clk = clock.Wall{}
	}
	if log == nil {
		log = slog.Default()
	}
	return &Pool{st: st, hc: hc, clock: clk, log: log, m: map[id]*entry{}}
}

// SetKey sets the key credentials are sealed with (server.secret_key), and
// re-reads every row with it on the next Sync.
func (p *Pool) SetKey(key []byte) {
	old := p.key.Swap(&key)
	if old == nil || string(*old) != string(key) {
		p.mu.Lock()
		for _, e := range p.m {
			e.st.Lock()
			e.version = -1
			e.st.Unlock()
		}
		p.mu.Unlock()
	}
}

func (p *Pool) keyBytes() []byte {
	if k := p.key.Load(); k != nil {
		return *k
	}
	return nil
}

func (p *Pool) get(channel, account string) *entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.m[id{channel, account}]
	if e == nil {
		e = &entry{version: -1}
		p.m[id{channel, account}] = e
	}
	return e
}

// Run calls Sync every interval until ctx ends.
func (p *Pool) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := p.Sync(ctx); err != nil && ctx.Err() == nil {
			p.log.Warn("accounts: reading the accounts table failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sync reads the accounts table and adopts every row whose version
// changed; accounts whose row is gone are signed out.
func (p *Pool) Sync(ctx context.Context) error {
	rows, err := p.st.ListAccounts(ctx)
	if err != nil {
		return err
	}
	seen := map[id]bool{}
	for _, r := range rows {
		seen[id{r.Channel, r.Account}] = true
		e := p.get(r.Channel, r.Account)
		e.st.Lock()
		if e.version != r.Version {
			p.adoptLocked(e, r)
		}
		e.st.Unlock()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, e := range p.m {
		if !seen[k] {
			e.st.Lock()
			e.present, e.version, e.cred, e.credErr, e.invalid = false, -1, Credential{}, nil, ""
			e.exhausted, e.quota = time.Time{}, Quota{}
			e.st.Unlock()
		}
	}
	return nil
}

// adoptLocked makes e the row r; e.st is held.
func (p *Pool) adoptLocked(e *entry, r store.Account) {
	e.present, e.version, e.provider = true, r.Version, r.Provider
	e.cred, e.credErr = Open(p.keyBytes(), r.Channel, r.Account, r.Credential)
	e.invalid = ""
	if r.State == store.AccountInvalid {
		e.invalid = r.Reason
		if e.invalid == "" {
			e.invalid = "invalid"
		}
	}
	// The later exhaustion wins: a row read before this process's own
	// note of a usage limit reached the database must not end it early.
	if r.ExhaustedUntil.After(e.exhausted) {
		e.exhausted = r.ExhaustedUntil
	}
	if q := parseQuota(r.Quota); q.Primary != nil || q.Secondary != nil {
		e.quota = q
	}
	e.refreshed, e.subject = r.LastRefresh, r.SubjectFP
}

// Usable reports whether an account may take a request now, and if not,
// why.
func (p *Pool) Usable(channel, account string, now time.Time) (bool, string) {
	e := p.get(channel, account)
	e.st.Lock()
	defer e.st.Unlock()
	switch {
	case !e.present:
		return false, "not signed in"
	case e.credErr != nil:
		return false, e.credErr.Error()
	case e.invalid != "":
		return false, "invalid: " + e.invalid
	case now.Before(e.exhausted):
		return false, "exhausted until " + e.exhausted.Format(time.RFC3339)
	}
	return true, ""
}

// ErrUnavailable wraps why an account cannot be used.
var ErrUnavailable = errors.New("account unavailable")

// Access returns the account's credential, refreshed first when its
// access token is near its end (RefreshMargin).
func (p *Pool) Access(ctx context.Context, ch *config.Channel, account string) (Credential, error) {
	e := p.get(ch.Name, account)
	if ok, why := p.Usable(ch.Name, account, p.clock.Now()); !ok {
		return Credential{}, fmt.Errorf("%w: %s", ErrUnavailable, why)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.st.Lock()
	c := e.cred
	e.st.Unlock()
	if !needsRefresh(c, p.clock.Now()) {
		return c, nil
	}
	return p.refreshLocked(ctx, ch, account, e, c, false)
}

// Expired renews the account's token after the provider refused used (a
// 401): once, unless another request renewed it meanwhile.
func (p *Pool) Expired(ctx context.Context, ch *config.Channel, account string, used Credential) (Credential, error) {
	e := p.get(ch.Name, account)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.st.Lock()
	c := e.cred
	e.st.Unlock()
	if c.AccessToken != used.AccessToken && c.AccessToken != "" {
		return c, nil
	}
	return p.refreshLocked(ctx, ch, account, e, used, true)
}

// refreshLocked renews the account's token under the row claim. e.mu is
// held. used is the credential the caller has; force renews even a token
// that looks fresh (the provider refused it).
func (p *Pool) refreshLocked(ctx context.Context, ch *config.Channel, account string, e *entry, used Credential, force bool) (Credential, error) {
	e.refreshing.Store(true)
	defer e.refreshing.Store(false)
	key := p.keyBytes()
	var out Credential
	var outErr error
	var wrote store.Account
	var written, adopt bool
	err := p.st.LockAccount(ctx, ch.Name, account, func(row store.Account, found bool) (store.Account, bool, error) {
		now := p.clock.Now()
		if !found {
			outErr = fmt.Errorf("%w: not signed in", ErrUnavailable)
			return row, false, nil
		}
		if row.State == store.AccountInvalid {
			wrote, adopt = row, true
			outErr = fmt.Errorf("%w: invalid: %s", ErrUnavailable, row.Reason)
			return row, false, nil
		}
		cur, err := Open(key, ch.Name, account, row.Credential)
		if err != nil {
			outErr = err
			return row, false, nil
		}
		if cur.AccessToken != used.AccessToken && !needsRefresh(cur, now) {
			// Renewed by another request or instance while we waited
			// for the lock: one refresh per rotation.
			out, wrote, adopt = cur, row, true
			return row, false, nil
		}
		if !force && !needsRefresh(cur, now) {
			out = cur
			return row, false, nil
		}
		if cur.RefreshToken == "" {
			row.State, row.Reason = store.AccountInvalid, "the access token was refused and there is no refresh token (signed in with --token): sign in again"
			wrote, written = row, true
			outErr = fmt.Errorf("%w: invalid: %s", ErrUnavailable, row.Reason)
			return row, true, nil
		}
		p.Refreshes.Add(1)
		t, err := refresh(ctx, p.hc, ch, cur)
		var oe *oauth.Error
		switch {
		case errors.As(err, &oe) && oe.Terminal():
			row.State, row.Reason = store.AccountInvalid, oe.Code
			if oe.Description != "" {
				row.Reason += ": " + oe.Description
			}
			wrote, written = row, true
			outErr = fmt.Errorf("%w: invalid: %s", ErrUnavailable, row.Reason)
			p.log.Warn("accounts: refresh refused; account taken out of rotation", "channel", ch.Name, "account", account, "reason", oe.Code)
			return row, true, nil
		case err != nil:
			// The token endpoint is down or slow: keep using a token
			// that has not expired yet, and try again next request.
			if !force && now.Before(cur.Expires) {
				out = cur
			} else {
				outErr = fmt.Errorf("refresh failed: %w", err)
			}
			return row, false, nil
		}
		nc := FromTokens(ch.OAuth, t, cur, now)
		blob, err := Seal(key, ch.Name, account, nc)
		if err != nil {
			return row, false, err
		}
		row.Credential, row.AccessExpires, row.LastRefresh = blob, nc.Expires, now
		row.State, row.Reason = store.AccountOK, ""
		if nc.AccountID != "" {
			row.SubjectFP = Fingerprint(nc.AccountID)
		}
		out, wrote, written = nc, row, true
		return row, true, nil
	})
	if err != nil {
		return Credential{}, err
	}
	if written || adopt {
		if written {
			wrote.Version++
		}
		e.st.Lock()
		if wrote.Version > e.version || e.version < 0 {
			p.adoptLocked(e, wrote)
		}
		e.st.Unlock()
	}
	return out, outErr
}

// Observe reads the quota headers of an answer from an account.
func (p *Pool) Observe(ch *config.Channel, account string, get func(string) string) {
	if ch.OAuth != config.OAuthCodex {
		return
	}
	now := p.clock.Now()
	q, ok := CodexQuota(get, now)
	if !ok {
		return
	}
	p.setQuota(ch.Name, account, q, q.ExhaustedUntil(now), now)
}

// Refused reads an error answer from an account. It reports whether the
// answer said the account's quota is used up, with the reset time: the
// account is then skipped until exactly then.
func (p *Pool) Refused(ch *config.Channel, account string, status int, body []byte) (time.Time, bool) {
	if ch.OAuth != config.OAuthCodex {
		return time.Time{}, false
	}
	now := p.clock.Now()
	until, ok := CodexUsageLimit(status, body, now)
	if !ok {
		return time.Time{}, false
	}
	e := p.get(ch.Name, account)
	e.st.Lock()
	q := e.quota
	e.st.Unlock()
	if until.IsZero() {
		until = q.ExhaustedUntil(now)
		for _, w := range []*Window{q.Primary, q.Secondary} {
			if until.IsZero() && w != nil && w.ResetsAt.After(now) {
				until = w.ResetsAt
			}
		}
	}
	if until.IsZero() {
		return time.Time{}, false // no reset known: an ordinary rate limit
	}
	p.setQuota(ch.Name, account, q, until, now)
	return until, true
}

// setQuota keeps an account's quota, storing it when the exhausted time
// changed or every quotaSaveEvery, so every instance and `ccload
// accounts` see it without a write per request.
func (p *Pool) setQuota(channel, account string, q Quota, exhausted, now time.Time) {
	const quotaSaveEvery = 15 * time.Second
	e := p.get(channel, account)
	e.st.Lock()
	changed := !exhausted.Equal(e.exhausted)
	e.quota, e.exhausted = q, exhausted
	save := changed || now.Sub(e.quotaSaved) >= quotaSaveEvery
	if save {
		e.quotaSaved = now
	}
	e.st.Unlock()
	if !save {
		return
	}
	// Stored off the request path: this runs as the answer's headers
	// arrive, and a database write must not delay them.
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := p.st.SetAccountQuota(ctx, channel, account, exhausted, q.json()); err != nil {
			p.log.Warn("accounts: storing quota failed", "channel", channel, "account", account, "err", err)
		}
	}()
}

// Refreshing reports whether a refresh of the account runs in this process.
func (p *Pool) Refreshing(channel, account string) bool {
	return p.get(channel, account).refreshing.Load()
}
