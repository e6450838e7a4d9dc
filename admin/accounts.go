package admin

import (
	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/account"
)

// accounts is GET /admin/accounts: the subscription accounts of the oauth
// channels with their state and quota windows (docs/accounts.md), as
// `ccload accounts --json` prints them. No credential is in it.
func (s *Server) accounts(ctx *fasthttp.RequestCtx) error {
	snap := s.cfg.Current()
	rows, err := s.st.ListAccounts(detach(ctx))
	if err != nil {
		return errInternal("reading accounts failed", err)
	}
	key, _ := config.ParseSecretKey(snap.Server.SecretKey.Reveal())
	var refreshing func(string, string) bool
	if e, ok := s.eng.(interface{ Accounts() *account.Pool }); ok && e.Accounts() != nil {
		refreshing = e.Accounts().Refreshing
	}
	list := account.Describe(rows, snap, key, s.clock.Now(), refreshing)
	if use, err := s.st.AccountUsage(detach(ctx), account.StartOfDay(s.clock.Now())); err == nil {
		account.AddUsage(list, use)
	}
	if list == nil {
		list = []account.Status{}
	}
	return writeJSON(ctx, fasthttp.StatusOK, map[string]any{"time": s.clock.Now(), "accounts": list})
}
