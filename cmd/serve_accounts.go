package cmd

import (
	"context"
	"log/slog"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/account"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/store"
)

// accountPoll is how often a server reads the accounts table, so a
// `ccload login` or `logout` (from any machine on the database) and a
// refresh by another instance take effect within seconds.
const accountPoll = 2 * time.Second

// accountRefreshTick is how often the background refresher looks for idle
// accounts whose token entered its refresh margin. The look is in memory;
// the shortest margin we meet (a fifth of a few seconds' life) still
// gets a tick inside it.
const accountRefreshTick = time.Second

// runAccountRefresher renews idle accounts (account.Pool.RefreshDue)
// until ctx ends, over the channels of the current config.
func runAccountRefresher(ctx context.Context, p *account.Pool, src *config.Source) {
	p.RunRefresher(ctx, accountRefreshTick, func() []*config.Channel { return src.Current().Channels })
}

// newAccountPool makes the pool of signed-in accounts and keeps its key in
// step with server.secret_key across reloads. It reads the table once now
// (when the database is up) and then every accountPoll in the background.
func newAccountPool(ctx context.Context, st store.Store, snap *config.Snapshot, clk clock.Clock, log *slog.Logger) *account.Pool {
	p := account.New(st, nil, clk, log)
	setAccountKey(p, snap)
	if snap.HasOAuth() {
		if err := p.Sync(ctx); err != nil {
			log.Warn("accounts: could not read the signed-in accounts yet; retrying in the background", "err", err)
		}
		warnUndecryptable(p, snap, log)
	}
	return p
}

func setAccountKey(p *account.Pool, snap *config.Snapshot) {
	if key, ok := config.ParseSecretKey(snap.Server.SecretKey.Reveal()); ok {
		p.SetKey(key)
	}
}

// warnUndecryptable says plainly at start when stored credentials were
// sealed with another key.
func warnUndecryptable(p *account.Pool, snap *config.Snapshot, log *slog.Logger) {
	for _, ch := range snap.Channels {
		for _, a := range ch.Accounts {
			if ok, why := p.Usable(ch.Name, a, time.Now()); !ok && why == account.ErrUndecryptable.Error() {
				log.Error("accounts: "+why, "channel", ch.Name, "account", a)
			}
		}
	}
}
