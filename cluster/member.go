// Package cluster is the instance list of a scale-out deployment
// (docs/scale-out.md): each `ccload serve` process is a Member that writes a
// heartbeat row into the shared database every few seconds, and reads back
// the rows that are still fresh. A single instance on SQLite lists itself.
//
// Only the list is shared. What a process does (its in-flight requests, its
// /admin/events stream) stays its own; the heartbeat carries the in-flight
// count so the list can show the load of each instance.
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/store"
)

// Timing of the list. An instance that stops (crash, SIGKILL, partition)
// drops out of every list LiveFor after its last heartbeat; its row is
// deleted DeleteAfter that. A clean shutdown deletes the row at once.
const (
	HeartbeatEvery = 5 * time.Second
	LiveFor        = 30 * time.Second
	DeleteAfter    = 10 * time.Minute
	beatTimeout    = 5 * time.Second // one database write; a slow one must not stack up
)

// Options configures a Member. Store is required.
type Options struct {
	Store    store.Instances
	Version  string
	InFlight func() int64 // client requests in flight now; nil reads 0
	Clock    clock.Clock  // nil = wall clock
	Logger   *slog.Logger // nil = slog.Default()
	// Hostname overrides os.Hostname (tests).
	Hostname string
}

// Member is this process in the instance list. It is safe for concurrent
// use.
type Member struct {
	st       store.Instances
	inFlight func() int64
	clock    clock.Clock
	log      *slog.Logger

	mu       sync.Mutex
	self     store.Instance
	failing  bool // the last heartbeat failed; logged once per outage
	lastLive []store.Instance
}

// New returns the Member of this process, with a fresh random id; call
// SetAddress once the listener is bound, then Run.
func New(opts Options) *Member {
	m := &Member{st: opts.Store, inFlight: opts.InFlight, clock: opts.Clock, log: opts.Logger}
	if m.clock == nil {
		m.clock = clock.Wall{}
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	if m.inFlight == nil {
		m.inFlight = func() int64 { return 0 }
	}
	host := opts.Hostname
	if host == "" {
		host, _ = os.Hostname()
	}
	if host == "" {
		host = "ccload"
	}
	now := m.clock.Now()
	m.self = store.Instance{ID: newID(host), Hostname: host, Version: opts.Version, Started: now, Heartbeat: now}
	return m
}

// newID is the hostname (cut to leave room) and 8 random hex digits: two
// processes on one host, or a restarted pod with the same name, never
// share a row.
func newID(host string) string {
	var b [4]byte
	rand.Read(b[:])
	if len(host) > 100 {
		host = host[:100]
	}
	return host + "-" + hex.EncodeToString(b[:])
}

// SetAddress records the address the process serves on. An unspecified
// host (":8080", "0.0.0.0:8080") is replaced by the hostname, which is
// what other machines can reach.
func (m *Member) SetAddress(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			addr = net.JoinHostPort(m.self.Hostname, port)
		}
	}
	m.self.Address = addr
}

// Self is this process's row as of now.
func (m *Member) Self() store.Instance {
	m.mu.Lock()
	defer m.mu.Unlock()
	in := m.self
	in.InFlight = m.inFlight()
	return in
}

// Run writes a heartbeat now and every HeartbeatEvery, deletes rows dead for
// DeleteAfter once a minute, and deletes its own row when ctx ends (a clean
// shutdown leaves the list at once). Database errors are logged, once per
// outage, and retried at the next beat.
func (m *Member) Run(ctx context.Context) {
	m.beat(ctx)
	m.prune(ctx)
	beat := time.NewTicker(HeartbeatEvery)
	defer beat.Stop()
	prune := time.NewTicker(time.Minute)
	defer prune.Stop()
	for {
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), beatTimeout)
			defer cancel()
			if err := m.st.DeleteInstance(dctx, m.Self().ID); err != nil {
				m.log.Warn("could not remove this instance from the instance list; it drops out after 30 s", "err", err)
			}
			return
		case <-beat.C:
			m.beat(ctx)
		case <-prune.C:
			m.prune(ctx)
		}
	}
}

// Beat writes one heartbeat (Run does it on its own; tests call it).
func (m *Member) Beat(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, beatTimeout)
	defer cancel()
	m.mu.Lock()
	m.self.Heartbeat = m.clock.Now()
	m.mu.Unlock()
	return m.st.Heartbeat(ctx, m.Self())
}

func (m *Member) beat(ctx context.Context) {
	err := m.Beat(ctx)
	m.mu.Lock()
	was := m.failing
	m.failing = err != nil
	m.mu.Unlock()
	switch {
	case err != nil && !was && ctx.Err() == nil:
		m.log.Warn("instance heartbeat failed; other instances drop this one from their list after 30 s until the database answers", "err", err)
	case err == nil && was:
		m.log.Info("instance heartbeat written again")
	}
}

func (m *Member) prune(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, beatTimeout)
	defer cancel()
	if _, err := m.st.PruneInstances(ctx, m.clock.Now().Add(-DeleteAfter)); err != nil && ctx.Err() == nil {
		m.log.Debug("could not delete dead instances", "err", err)
	}
}

// Live returns the instances whose heartbeat is younger than LiveFor, this
// one always among them (with its current in-flight count, even before its
// first heartbeat is written). When the database does not answer it
// returns the last list it read (this one alone before any) and the error.
func (m *Member) Live(ctx context.Context) ([]store.Instance, error) {
	self := m.Self()
	list, err := m.st.ListInstances(ctx, m.clock.Now().Add(-LiveFor))
	m.mu.Lock()
	if err != nil {
		list = append([]store.Instance(nil), m.lastLive...)
	} else {
		m.lastLive = list
	}
	m.mu.Unlock()
	for i := range list {
		if list[i].ID == self.ID {
			list[i] = self
			return list, err
		}
	}
	return append([]store.Instance{self}, list...), err
}
