package cmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/ccload/ccload/admin"
	"github.com/ccload/ccload/cluster/feed"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/store"
)

// sharedState is storage.shared wired into serve (docs/scale-out.md
// "Shared state"): the change feed that carries cooldowns, pauses and
// session pins between the instances on one database. Without
// storage.shared it is nil and every method is a no-op.
type sharedState struct {
	feed *feed.Feed
	eng  *engine.Engine // set by attach before the feed runs
	done chan struct{}
	stop context.CancelFunc
}

// newSharedState places the feed's cursor before serve loads cooldowns and
// pauses from the tables, so that no change made meanwhile is missed.
func newSharedState(ctx context.Context, snap *config.Snapshot, st store.Store, src *config.Source, log *slog.Logger) (*sharedState, error) {
	if !snap.Storage.Shared {
		return nil, nil
	}
	sh, ok := st.(store.Shared)
	if !ok {
		return nil, fmt.Errorf("storage.shared: %s store has no change feed", st.Driver())
	}
	s := &sharedState{}
	s.feed = feed.New(feed.Options{
		Store:    sh,
		Instance: feedInstanceID(),
		Apply:    s.apply,
		Resync: func(ctx context.Context) error {
			return s.resync(ctx, st, src.Current())
		},
		Logger: log,
	})
	if err := s.feed.Start(ctx); err != nil {
		// The database is not reachable yet (store.OpenLazy): the feed is
		// read from its start once it is, which replays at most the last
		// hour of changes, in order, to the same final state.
		log.Warn("storage.shared: change feed not readable at start; following it from its start once the database answers", "err", err)
	}
	log.Info("storage.shared: sharing cooldowns, pauses, session pins and spend through the database", "instance", s.feed.Instance())
	return s, nil
}

// persister is the cooldown persister: through the feed when shared.
func (s *sharedState) persister(st store.Store) cooldown.Persister {
	if s == nil {
		return engine.StorePersister(st)
	}
	return engine.SharedPersister(st, s.feed)
}

// adminStore is the store the admin API writes overrides to: pauses and
// resumes are also published when shared.
func (s *sharedState) adminStore(st store.Store) store.Store {
	if s == nil {
		return st
	}
	return sharedOverrides{Store: st, feed: s.feed}
}

// run starts following and publishing for eng.
func (s *sharedState) run(eng *engine.Engine) {
	if s == nil {
		return
	}
	s.eng = eng
	eng.ShareState(s.feed)
	ctx, stop := context.WithCancel(context.Background())
	s.stop, s.done = stop, make(chan struct{})
	go func() {
		defer close(s.done)
		s.feed.Run(ctx)
	}()
}

// close stops the feed after one last attempt to publish what is pending.
// Close the cooldown registry first, so its last changes reach the feed.
func (s *sharedState) close() {
	if s == nil || s.stop == nil {
		return
	}
	s.stop()
	<-s.done
}

// apply takes another instance's change (the feed's goroutine).
func (s *sharedState) apply(c store.Change) {
	if c.Kind == store.ChangePause {
		s.eng.SetPaused(c.Item, c.Value != "")
		return
	}
	s.eng.ApplyChange(c)
}

// resync reloads cooldowns and pauses after the feed lost changes. A
// cooldown cleared elsewhere meanwhile stays here until it ends.
func (s *sharedState) resync(ctx context.Context, st store.Store, snap *config.Snapshot) error {
	if err := engine.LoadCooldowns(ctx, st, s.eng.Cooldowns(), time.Now()); err != nil {
		return err
	}
	ovs, err := st.ListOverrides(ctx)
	if err != nil {
		return err
	}
	paused := map[string]bool{}
	for _, o := range ovs {
		if o.Kind == admin.OverridePause {
			paused[o.Target] = true
		}
	}
	for _, ch := range snap.Channels {
		s.eng.SetPaused(ch.Name, paused[ch.Name])
	}
	return nil
}

// sharedOverrides publishes the pauses the admin API stores.
type sharedOverrides struct {
	store.Store
	feed *feed.Feed
}

func (s sharedOverrides) SetOverride(ctx context.Context, o store.Override) error {
	if err := s.Store.SetOverride(ctx, o); err != nil {
		return err
	}
	if o.Kind == admin.OverridePause {
		s.feed.Publish(store.ChangePause, o.Target, "paused", nil)
	}
	return nil
}

func (s sharedOverrides) DeleteOverride(ctx context.Context, kind, target string) error {
	if err := s.Store.DeleteOverride(ctx, kind, target); err != nil {
		return err
	}
	if kind == admin.OverridePause {
		s.feed.Publish(store.ChangePause, target, "", nil)
	}
	return nil
}

// feedInstanceID names this process in the feed: the host name, cut to fit,
// and a random suffix, so that a restarted process is a new instance.
func feedInstanceID() string {
	host, _ := os.Hostname()
	if len(host) > 40 {
		host = host[:40]
	}
	b := make([]byte, 6)
	rand.Read(b)
	return host + "-" + hex.EncodeToString(b)
}
