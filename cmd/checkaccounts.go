package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/account"
	"github.com/ccload/ccload/store"
)

// checkAccounts opens the stored credentials of the oauth channels with
// server.secret_key and says plainly when they cannot be decrypted (the
// key changed or is wrong): the accounts must be signed in again. A
// database that cannot be reached is not a failure here (check runs in CI
// without one); a missing SQLite file means nobody signed in yet.
func checkAccounts(opts *CheckOptions, snap *config.Snapshot) error {
	if !snap.HasOAuth() {
		return nil
	}
	if snap.Storage.Driver == "sqlite" {
		if _, err := os.Stat(snap.Storage.DSN.Reveal()); err != nil {
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := store.Open(ctx, snap.Storage.Driver, snap.Storage.DSN.Reveal())
	if err != nil {
		fmt.Fprintf(opts.IO.Err, "note: stored account credentials not checked (database: %v)\n", err)
		return nil
	}
	defer st.Close()
	rows, err := st.ListAccounts(ctx)
	if err != nil {
		return nil
	}
	key, _ := config.ParseSecretKey(snap.Server.SecretKey.Reveal())
	bad := 0
	for _, s := range account.Describe(rows, snap, key, time.Now(), nil) {
		switch s.State {
		case account.StateUndecryptable:
			bad++
			fmt.Fprintf(opts.IO.Err, "%s: account %s/%s: %s\n", opts.Config, s.Channel, s.Account, s.Reason)
		case account.StateInvalid:
			fmt.Fprintf(opts.IO.Err, "%s: account %s/%s is invalid (%s): sign it in again\n", opts.Config, s.Channel, s.Account, s.Reason)
		case account.StateSignedOut:
			fmt.Fprintf(opts.IO.Err, "%s: account %s/%s is not signed in (ccload login %s --channel %s --account %s)\n",
				opts.Config, s.Channel, s.Account, s.Provider, s.Channel, s.Account)
		}
	}
	if bad > 0 {
		return &exitError{code: exitFail, err: errors.New("server.secret_key cannot decrypt the stored credentials of " +
			fmt.Sprint(bad) + " account(s): the key changed or is wrong. Restore the old key, or sign those accounts in again with `ccload login`.")}
	}
	return nil
}
