package engine

import (
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/failure"
)

// cooldownPolicy maps routing.cooldown onto the registry's policy. Network
// failures (refused, reset, DNS) cool a URL like a timeout does.
func cooldownPolicy(c config.Cooldown) cooldown.Policy {
	return cooldown.Policy{
		Initial: map[failure.Kind]time.Duration{
			failure.KindAuth:      c.Auth.D(),
			failure.KindRateLimit: c.RateLimit.D(),
			failure.KindServer:    c.Server.D(),
			failure.KindNotFound:  c.Server.D(),
			failure.KindTimeout:   c.Timeout.D(),
			failure.KindNetwork:   c.Timeout.D(),
		},
		Min: c.Min.D(),
		Max: c.Max.D(),
	}
}
