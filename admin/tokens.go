package admin

import (
	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/store"
)

// tokens is GET /admin/tokens: every configured token with its limits,
// lifetime cost, today's usage and live load. Costs come from usage_daily,
// so rows still waiting in the log writer's queue are not counted yet.
func (s *Server) tokens(ctx *fasthttp.RequestCtx) error {
	now := s.clock.Now()
	snap := s.cfg.Current()
	today, err := s.usageToday(detach(ctx), now, func(u store.UsageDay) string { return u.Token })
	if err != nil {
		return err
	}
	out := []adminapi.Token{}
	for _, t := range snap.Tokens {
		cost, err := s.st.TokenCost(detach(ctx), t.Name)
		if err != nil {
			return errInternal("reading token cost failed", err)
		}
		inFlight, rpm := s.eng.TokenLoad(t.Name)
		out = append(out, adminapi.Token{
			TokenConfig: tokenConfig(t),
			Expired:     t.Expired(now),
			CostUsed:    cost,
			InFlight:    inFlight,
			RPM:         rpm,
			Today:       today[t.Name],
		})
	}
	return writeJSON(ctx, fasthttp.StatusOK, adminapi.TokensResponse{Time: now, Tokens: out})
}
