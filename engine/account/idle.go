package account

import (
	"context"
	"errors"
	"time"

	"github.com/ccload/ccload/config"
)

// An account refreshes at the request that needs its token; an idle one
// would not, and its refresh token could lapse over a quiet night (the
// providers expire unused refresh tokens) while the first request in the
// morning waits for a refresh. RunRefresher renews such accounts in the
// background, through the same path a request takes (Access: one refresh
// per account at a time in the process, the row claim across instances),
// so a request and the refresher, or two instances' refreshers, still
// spend a refresh token once.

// RunRefresher calls RefreshDue every interval until ctx ends, with the
// channels current at each tick.
func (p *Pool) RunRefresher(ctx context.Context, every time.Duration, channels func() []*config.Channel) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p.RefreshDue(ctx, channels())
	}
}

// RefreshDue renews every usable account of the oauth channels whose
// access token is inside its refresh margin (RefreshMargin), and reports
// how many it renewed or found renewed by another instance. A refusal for
// good makes the account invalid, as at a request.
func (p *Pool) RefreshDue(ctx context.Context, channels []*config.Channel) int {
	n := 0
	for _, ch := range channels {
		if ch.OAuth == "" || !ch.Enabled {
			continue
		}
		for _, a := range ch.Accounts {
			if ctx.Err() != nil {
				return n
			}
			now := p.clock.Now()
			if ok, _ := p.Usable(ch.Name, a, now); !ok {
				continue
			}
			e := p.get(ch.Name, a)
			e.st.Lock()
			due := needsRefresh(e.cred, now)
			e.st.Unlock()
			if !due {
				continue
			}
			if _, err := p.Access(ctx, ch, a); err != nil {
				if !errors.Is(err, ErrUnavailable) {
					p.log.Warn("accounts: background refresh failed; retried at the next tick or request", "channel", ch.Name, "account", a, "err", err)
				}
				continue
			}
			n++
		}
	}
	return n
}
