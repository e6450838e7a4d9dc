package admin

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/engine/cooldown"
)

// This file turns config and runtime values into the API's views. Every
// secret goes through config.Fingerprint or maskURL here, so the handlers
// never see one in a form that could be marshalled.

// maskURL is config.MaskURL (URLs recorded by the engine are masked
// already; masking is idempotent).
func maskURL(raw string) string { return config.MaskURL(raw) }

func channelConfig(ch *config.Channel) adminapi.ChannelConfig {
	c := adminapi.ChannelConfig{
		Name: ch.Name, Enabled: ch.Enabled, Priority: ch.Priority, Weight: ch.Weight,
		KeyStrategy: ch.KeyStrategy, Proxy: maskURL(ch.Proxy),
		URLs: []adminapi.URLView{}, Keys: []string{}, Models: []adminapi.ModelView{},
		Limits: adminapi.Limits{
			RPMLimit: ch.RPMLimit, MaxConcurrency: ch.MaxConcurrency, DailyCostLimit: ch.DailyCostLimit,
			CostMultiplier: ch.CostMultiplier,
		},
	}
	if ch.ActiveHours != nil {
		c.Limits.ActiveHours = ch.ActiveHours.String()
	}
	for _, u := range ch.URLs {
		v := adminapi.URLView{URL: maskURL(u.URL), Exact: u.Exact, Protocols: []string{}}
		for _, p := range u.Protocols {
			v.Protocols = append(v.Protocols, string(p))
		}
		c.URLs = append(c.URLs, v)
	}
	for _, k := range ch.Keys {
		c.Keys = append(c.Keys, engine.KeyID(k))
	}
	for _, m := range ch.Models {
		c.Models = append(c.Models, adminapi.ModelView{Name: m.Name, Upstream: m.Upstream, Disabled: m.Disabled})
	}
	if len(ch.Rewrite.Headers)+len(ch.Rewrite.Body) > 0 {
		rw := &adminapi.RewriteView{Headers: []adminapi.RuleView{}, Body: []adminapi.RuleView{}}
		for _, h := range ch.Rewrite.Headers {
			r := adminapi.RuleView{Action: h.Action, Name: h.Name}
			if h.Value != "" {
				r.Value, _ = json.Marshal(config.Fingerprint(h.Value))
			}
			rw.Headers = append(rw.Headers, r)
		}
		for _, b := range ch.Rewrite.Body {
			rw.Body = append(rw.Body, adminapi.RuleView{Action: b.Action, Path: b.Path, Value: slices.Clone(b.Value)})
		}
		c.Rewrite = rw
	}
	if ch.Check != nil {
		c.Check = &adminapi.CheckView{Model: ch.Check.Model, Every: ch.Check.Every.String()}
	}
	return c
}

func tokenConfig(t *config.Token) adminapi.TokenConfig {
	v := adminapi.TokenConfig{
		Name: t.Name, Fingerprint: config.Fingerprint(t.SHA256),
		Models:    nonNil(t.Models),
		Channels:  adminapi.ChannelRule{Allow: nonNil(t.Channels.Allow), Deny: nonNil(t.Channels.Deny)},
		CostLimit: t.CostLimit, MaxConcurrency: t.MaxConcurrency, RPMLimit: t.RPMLimit,
	}
	if !t.Expires.IsZero() {
		e := t.Expires
		v.Expires = &e
	}
	return v
}

func configView(snap *config.Snapshot) adminapi.ConfigView {
	cd := snap.Routing.Cooldown
	to := snap.Routing.Timeouts
	hs := snap.Routing.HealthScore
	v := adminapi.ConfigView{
		Version: snap.Version,
		Server: adminapi.ServerView{
			Listen: snap.Server.Listen, AdminPassword: passwordState(snap.Server.AdminPassword),
			MaxBodyBytes: snap.Server.MaxBodyBytes.String(),
		},
		Storage: adminapi.StorageView{
			Driver: snap.Storage.Driver, DSN: snap.Storage.DSN.String(),
			LogRetention: snap.Storage.LogRetention.String(), LogQueue: snap.Storage.LogQueue,
			Shared: snap.Storage.Shared,
		},
		Routing: adminapi.RoutingView{
			Cooldown: map[string]string{
				"auth": cd.Auth.String(), "rate_limit": cd.RateLimit.String(), "server": cd.Server.String(),
				"timeout": cd.Timeout.String(), "min": cd.Min.String(), "max": cd.Max.String(),
				"fallback": boolString(cd.Fallback),
			},
			Timeouts: map[string]string{
				"first_byte": to.FirstByte.String(), "non_stream": to.NonStream.String(), "stream": to.Stream.String(),
				"request": to.Request.String(),
			},
			MaxAttempts: snap.Routing.MaxAttempts,
			HealthScore: adminapi.HealthScoreView{Enabled: hs.Enabled, Window: hs.Window.String(), MinSamples: hs.MinSamples, Penalty: hs.Penalty},
		},
		Channels: []adminapi.ChannelConfig{},
		Tokens:   []adminapi.TokenConfig{},
		Pricing:  map[string]adminapi.PriceView{},
	}
	for _, ch := range snap.Channels {
		v.Channels = append(v.Channels, channelConfig(ch))
	}
	for _, t := range snap.Tokens {
		v.Tokens = append(v.Tokens, tokenConfig(t))
	}
	for m, p := range snap.Pricing {
		v.Pricing[m] = adminapi.PriceView{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}
	}
	return v
}

func cooldownView(e cooldown.Entry, now time.Time) adminapi.Cooldown {
	return adminapi.Cooldown{
		Scope: string(e.Key.Scope), Channel: e.Key.Channel, Key: e.Key.KeyFP, Model: e.Key.Model,
		URL: engine.URLOfID(e.Key.URL), Until: e.Until, SecondsLeft: secondsLeft(e.Until, now),
		Strikes: e.Strikes, Kind: string(e.Kind), Reason: e.Reason,
	}
}

// secondsLeft rounds up, so a cooldown still running never shows 0.
func secondsLeft(until, now time.Time) int64 {
	d := until.Sub(now)
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// passwordState shows only whether the admin password is set: unlike a
// random API key, a human-chosen password would give too much away even as
// a first-and-last-four fingerprint.
func passwordState(p config.Secret) string {
	if p.Reveal() == "" {
		return "(not set)"
	}
	return "(set)"
}
