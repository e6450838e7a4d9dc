package admin

import (
	"context"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/store"
)

// OverridePause is the store.Override kind of a runtime pause; its target
// is the channel name.
const OverridePause = "pause"

// RestorePauses re-applies the pauses stored in the overrides table, so a
// channel paused from the admin API stays paused across a restart. serve
// calls it before it starts accepting requests.
func RestorePauses(ctx context.Context, st store.Store, eng interface{ SetPaused(string, bool) }) (int, error) {
	ovs, err := st.ListOverrides(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range ovs {
		if o.Kind == OverridePause {
			eng.SetPaused(o.Target, true)
			n++
		}
	}
	return n, nil
}

// channels is GET /admin/channels.
func (s *Server) channels(ctx *fasthttp.RequestCtx) error {
	list, err := s.channelList(detach(ctx))
	if err != nil {
		return err
	}
	_, instances, _ := s.instances(detach(ctx))
	return writeJSON(ctx, fasthttp.StatusOK, adminapi.ChannelsResponse{Time: s.clock.Now(), Channels: list, Instances: instances})
}

func (s *Server) channelList(ctx context.Context) ([]adminapi.Channel, error) {
	now := s.clock.Now()
	snap := s.cfg.Current()
	today, err := s.usageToday(ctx, now, func(u store.UsageDay) string { return u.Channel })
	if err != nil {
		return nil, err
	}
	pausedAt, err := s.pauses(ctx)
	if err != nil {
		return nil, err
	}
	out := []adminapi.Channel{}
	for _, live := range s.eng.ChannelStates() {
		ch := snap.Channel(live.Name)
		if ch == nil {
			continue // removed by a reload between the two reads
		}
		c := adminapi.Channel{
			ChannelConfig: channelConfig(ch),
			Paused:        live.Paused, InFlight: live.InFlight, RPM: live.RPM,
			Cooldowns: []adminapi.Cooldown{}, Today: today[live.Name],
			Unpriced: append([]string{}, live.Unpriced...),
		}
		for i, u := range live.URLs {
			if i < len(c.URLs) {
				c.URLs[i].EWMAms, c.URLs[i].Visited = u.EWMAms, u.Visited
				c.URLs[i].Detected = detectionViews(u.Detected)
			}
		}
		if t, ok := pausedAt[live.Name]; ok && live.Paused {
			c.PausedAt = &t
		}
		for _, e := range live.Cooldowns {
			if now.Before(e.Until) {
				c.Cooldowns = append(c.Cooldowns, cooldownView(e, now))
			}
		}
		if lc := live.LastCheck; lc != nil {
			v := probeView(*lc)
			v.URL = maskURL(v.URL)
			c.LastCheck = &v
		}
		c.State = channelState(c)
		out = append(out, c)
	}
	return out, nil
}

// detectionViews is what protocol detection learned about one URL.
func detectionViews(ds []engine.Detection) []adminapi.DetectionView {
	var out []adminapi.DetectionView
	for _, d := range ds {
		v := adminapi.DetectionView{Client: string(d.Client), Protocol: string(d.Protocol)}
		if !d.RetryAt.IsZero() {
			t := d.RetryAt
			v.RetryAt = &t
		}
		out = append(out, v)
	}
	return out
}

func channelState(c adminapi.Channel) string {
	switch {
	case !c.Enabled:
		return "disabled"
	case c.Paused:
		return "paused"
	}
	for _, cd := range c.Cooldowns {
		if cd.Scope == string(failure.ScopeChannel) {
			return "cooling"
		}
	}
	if len(c.Cooldowns) > 0 {
		return "degraded"
	}
	return "ok"
}

// usageToday sums today's usage_daily rows (UTC day) by the name by picks.
func (s *Server) usageToday(ctx context.Context, now time.Time, by func(store.UsageDay) string) (map[string]adminapi.Usage, error) {
	day := now.UTC().Format(time.DateOnly)
	rows, err := s.st.UsageDaily(ctx, day)
	if err != nil {
		return nil, errInternal("reading usage failed", err)
	}
	out := map[string]adminapi.Usage{}
	saved := s.cacheSaving()
	for _, r := range rows {
		if r.Day != day {
			continue
		}
		k := by(r)
		u := out[k]
		u.Requests += r.Requests
		u.Errors += r.Errors
		u.InputTokens += r.InputTokens
		u.OutputTokens += r.OutputTokens
		u.Cost += r.Cost
		u.CacheReadTokens += r.CacheReadTokens
		u.CacheSaved += saved(r.Model, r.CacheReadTokens)
		out[k] = u
	}
	for k, u := range out {
		u.SetHitRate(u.InputTokens)
		out[k] = u
	}
	return out, nil
}

// pauses maps paused channel names to when the pause was stored.
func (s *Server) pauses(ctx context.Context) (map[string]time.Time, error) {
	ovs, err := s.st.ListOverrides(ctx)
	if err != nil {
		return nil, errInternal("reading overrides failed", err)
	}
	out := map[string]time.Time{}
	for _, o := range ovs {
		if o.Kind == OverridePause {
			out[o.Target] = o.CreatedAt
		}
	}
	return out, nil
}

// setPaused is POST /admin/channels/{name}/pause and /resume. The override
// is stored first, so that the engine is never paused without a record of
// it (the YAML stays the source of truth for everything else).
func (s *Server) setPaused(ctx *fasthttp.RequestCtx, name string, pause bool) error {
	// Resuming a channel that a reload removed is allowed, to clear its
	// stale override.
	if pause && s.cfg.Current().Channel(name) == nil {
		return errNotFound("no channel named " + quote(name))
	}
	if pause {
		err := s.st.SetOverride(detach(ctx), store.Override{Kind: OverridePause, Target: name, CreatedAt: s.clock.Now()})
		if err != nil {
			return errInternal("storing the pause failed", err)
		}
	} else if err := s.st.DeleteOverride(detach(ctx), OverridePause, name); err != nil {
		return errInternal("removing the pause failed", err)
	}
	s.eng.SetPaused(name, pause)
	s.log.Info("admin: channel pause set", "channel", name, "paused", pause)
	list, err := s.channelList(detach(ctx))
	if err != nil {
		return err
	}
	for _, c := range list {
		if c.Name == name {
			return writeJSON(ctx, fasthttp.StatusOK, c)
		}
	}
	return writeJSON(ctx, fasthttp.StatusOK, map[string]any{"name": name, "paused": pause})
}

// cooldowns is GET /admin/cooldowns.
func (s *Server) cooldowns(ctx *fasthttp.RequestCtx) error {
	now := s.clock.Now()
	out := []adminapi.Cooldown{}
	for _, e := range s.eng.Cooldowns().List() {
		out = append(out, cooldownView(e, now))
	}
	return writeJSON(ctx, fasthttp.StatusOK, adminapi.CooldownsResponse{Time: now, Cooldowns: out})
}

// clearCooldowns is POST /admin/cooldowns/clear. It removes every cooling
// entry that matches all the fields given; the URL matches in its masked
// form (as the API shows it) or in full.
func (s *Server) clearCooldowns(ctx *fasthttp.RequestCtx) error {
	var req adminapi.ClearRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	if req.Channel == "" && !req.All {
		return errBadRequest(`give "channel" (and optionally scope, key, model, url), or "all": true`)
	}
	switch failure.Scope(req.Scope) {
	case failure.ScopeNone, failure.ScopeKey, failure.ScopeModel, failure.ScopeURL, failure.ScopeChannel:
	default:
		return errBadRequest(`scope: want key, model, url or channel, got ` + quote(req.Scope))
	}
	now := s.clock.Now()
	reg := s.eng.Cooldowns()
	out := []adminapi.Cooldown{}
	for _, e := range reg.List() {
		if !matches(req, e.Key) {
			continue
		}
		if reg.Clear(e.Key) {
			out = append(out, cooldownView(e, now))
		}
	}
	s.log.Info("admin: cooldowns cleared", "count", len(out), "channel", req.Channel, "scope", req.Scope)
	return writeJSON(ctx, fasthttp.StatusOK, adminapi.ClearResponse{Cleared: out})
}

func matches(req adminapi.ClearRequest, k cooldown.Key) bool {
	eq := func(want, have string) bool { return want == "" || want == have }
	fp, _, _ := strings.Cut(k.KeyFP, "#")
	return eq(req.Scope, string(k.Scope)) && eq(req.Channel, k.Channel) && (eq(req.Key, k.KeyFP) || req.Key == fp) &&
		eq(req.Model, k.Model) && (req.URL == "" || req.URL == k.URL || req.URL == engine.URLOfID(k.URL) || maskURL(req.URL) == engine.URLOfID(k.URL))
}
