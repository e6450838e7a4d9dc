package store

import (
	"context"
	"time"
)

// PutAccount implements Store.
func (l *Lazy) PutAccount(ctx context.Context, a Account) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.PutAccount(ctx, a)
}

// DeleteAccount implements Store.
func (l *Lazy) DeleteAccount(ctx context.Context, channel, account string) (bool, error) {
	s, err := l.store()
	if err != nil {
		return false, err
	}
	return s.DeleteAccount(ctx, channel, account)
}

// ListAccounts implements Store.
func (l *Lazy) ListAccounts(ctx context.Context) ([]Account, error) {
	s, err := l.store()
	if err != nil {
		return nil, err
	}
	return s.ListAccounts(ctx)
}

// LockAccount implements Store.
func (l *Lazy) LockAccount(ctx context.Context, channel, account string, fn func(Account, bool) (Account, bool, error)) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.LockAccount(ctx, channel, account, fn)
}

// SetAccountQuota implements Store.
func (l *Lazy) SetAccountQuota(ctx context.Context, channel, account string, exhaustedUntil time.Time, quota string) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.SetAccountQuota(ctx, channel, account, exhaustedUntil, quota)
}

// AccountUsage implements Store.
func (l *Lazy) AccountUsage(ctx context.Context, since time.Time) (map[[2]string]AccountUse, error) {
	s, err := l.store()
	if err != nil {
		return nil, err
	}
	return s.AccountUsage(ctx, since)
}
