package engine

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/ccload/ccload/config"
)

// RunChecks probes every channel that has `check: {model, every}` at that
// interval (jittered by up to ±10% so instances and channels do not probe
// in lockstep), on every URL of the channel with its next key. A failed
// probe cools its scope as live traffic would; a success clears it. It
// reads the snapshot in force at each round, so reloads apply, and returns
// when ctx ends.
func (e *Engine) RunChecks(ctx context.Context) {
	next := map[string]time.Time{}
	for {
		snap := e.cfg.Current()
		now := time.Now()
		wake := now.Add(time.Minute) // re-read the config at least this often
		for _, ch := range snap.Channels {
			if ch.Check == nil || !ch.Enabled || ch.Check.Every.D() <= 0 || ch.OAuth != "" {
				delete(next, ch.Name)
				continue
			}
			due, ok := next[ch.Name]
			if !ok {
				due = now.Add(jitter(ch.Check.Every.D()) / 10) // first check soon after start
				next[ch.Name] = due
			}
			if !due.After(now) {
				e.checkChannel(ctx, snap, ch)
				due = time.Now().Add(jitter(ch.Check.Every.D()))
				next[ch.Name] = due
			}
			if due.Before(wake) {
				wake = due
			}
		}
		t := time.NewTimer(time.Until(wake))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.9 + 0.2*rand.Float64()))
}

func (e *Engine) checkChannel(ctx context.Context, snap *config.Snapshot, ch *config.Channel) {
	var model config.Model
	for _, m := range ch.Models {
		if m.Name == ch.Check.Model || m.Upstream == ch.Check.Model {
			model = m
			break
		}
	}
	if model.Name == "" || len(ch.Keys) == 0 {
		return
	}
	key := int(e.reg.keyCursor(ch.Name, true) % uint64(len(ch.Keys)))
	for ui := range ch.URLs {
		pctx, cancel := context.WithTimeout(ctx, max(snap.Routing.Timeouts.NonStream.D(), 30*time.Second))
		res := e.Check(pctx, snap, Probe{Channel: ch, Model: model, URL: ui, Key: key})
		cancel()
		level := e.log.Info
		if !res.OK {
			level = e.log.Warn
		}
		level("scheduled check", "channel", ch.Name, "model", model.Name, "url", ch.URLs[ui].URL, "key", res.Key,
			"ok", res.OK, "status", res.Status, "scope", res.Scope, "ms", res.TotalMs, "message", res.Message)
	}
}
