package cmd

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
)

// checkProbe is one planned probe of `ccload check` and the short name of
// its URL in the table.
type checkProbe struct {
	engine.Probe
	host string
}

// planProbes lists the probes to send, in file order: channel, model, URL,
// key, non-stream before stream. Without filters it takes enabled channels
// and enabled models; --channel and --model select by name and may name
// disabled ones. A name that matches nothing is a usage error.
func planProbes(snap *config.Snapshot, opts *CheckOptions) ([]checkProbe, error) {
	var chans []*config.Channel
	for _, name := range opts.Channels {
		if snap.Channel(name) == nil {
			return nil, fmt.Errorf("--channel: no channel %q in %s (channels: %s)", name, opts.Config, channelNames(snap))
		}
	}
	for _, ch := range snap.Channels {
		if ch.OAuth != "" {
			// Accounts are checked by their state (ccload accounts), not
			// by spending a subscription's quota on probes.
			continue
		}
		if len(opts.Channels) > 0 && slices.Contains(opts.Channels, ch.Name) || len(opts.Channels) == 0 && ch.Enabled {
			chans = append(chans, ch)
		}
	}
	wantModel := func(m config.Model) bool {
		if len(opts.Models) == 0 {
			return !m.Disabled
		}
		return slices.Contains(opts.Models, m.Name) || slices.Contains(opts.Models, m.Upstream)
	}
	for _, name := range opts.Models {
		served := slices.ContainsFunc(chans, func(ch *config.Channel) bool {
			return slices.ContainsFunc(ch.Models, func(m config.Model) bool { return m.Name == name || m.Upstream == name })
		})
		if !served {
			return nil, fmt.Errorf("--model: no channel to probe serves %q", name)
		}
	}
	var plan []checkProbe
	for _, ch := range chans {
		for _, m := range ch.Models {
			if !wantModel(m) {
				continue
			}
			for ui := range ch.URLs {
				host := urlLabel(ch, ui)
				for ki := range ch.Keys {
					p := engine.Probe{Channel: ch, Model: m, URL: ui, Key: ki}
					plan = append(plan, checkProbe{Probe: p, host: host})
					if opts.Stream {
						p.Stream = true
						plan = append(plan, checkProbe{Probe: p, host: host})
					}
				}
			}
		}
	}
	return plan, nil
}

func channelNames(snap *config.Snapshot) string {
	names := make([]string, len(snap.Channels))
	for i, ch := range snap.Channels {
		names[i] = ch.Name
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// urlLabel is how the table names URL i of ch: its host, or host and path
// when another URL of the channel has the same host.
func urlLabel(ch *config.Channel, i int) string {
	host := func(raw string) (string, string) {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return raw, ""
		}
		return u.Host, strings.TrimSuffix(u.Path, "/")
	}
	h, path := host(ch.URLs[i].URL)
	for j, other := range ch.URLs {
		if oh, _ := host(other.URL); j != i && oh == h {
			return h + path
		}
	}
	return h
}

// runProbes sends the probes, at most parallel at once, each bounded by
// timeout, and returns their results in plan order. The engine is a
// throwaway one over snap: probes go through the same transport, proxy and
// rewrite code as serve, and touch no cooldown.
func runProbes(snap *config.Snapshot, plan []checkProbe, parallel int, timeout time.Duration) []engine.ProbeResult {
	eng := engine.New(engine.Options{Config: staticConfig{snap}, Logger: slog.New(slog.DiscardHandler)})
	out := make([]engine.ProbeResult, len(plan))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, p := range plan {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			// The deadline covers dialing, headers and the body: the
			// engine's upstream client cancels all three with the context.
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			out[i] = eng.RunProbe(ctx, snap, p.Probe)
		})
	}
	wg.Wait()
	return out
}

// staticConfig serves one snapshot to the engine: check never reloads.
type staticConfig struct{ snap *config.Snapshot }

func (s staticConfig) Current() *config.Snapshot { return s.snap }

func (s staticConfig) Status() config.Status {
	return config.Status{File: s.snap.File, SHA256: s.snap.SHA256, LoadedAt: s.snap.LoadedAt, LastAttempt: s.snap.LoadedAt}
}
