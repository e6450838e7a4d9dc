package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/affinity"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/engine/health"
	"github.com/ccload/ccload/engine/responsesws"
	"github.com/ccload/ccload/engine/spend"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/pricing"
)

// snapView is everything the engine derives from one config snapshot: the
// credentials that authenticated (auth.go), the redactor that knows the
// snapshot's secrets and its price table (both below), and what protocol
// detection learned under it (detect.go). It is built in one
// place when the snapshot is swapped in (Engine.Sweep), and one pointer
// comparison tells a request whether the view it finds is of its snapshot;
// a reload therefore starts all four afresh together.
type snapView struct {
	snap   *config.Snapshot
	tokens tokenCache
	red    *failure.Redactor
	detect *detector
	// over is the file's pricing: entries; the table is rebuilt from them
	// only when the price catalog's copy changes (Engine.Prices).
	over   map[string]pricing.Price
	prices atomic.Pointer[priceBuild]
}

func (e *Engine) newSnapView(snap *config.Snapshot) *snapView {
	v := &snapView{
		snap:   snap,
		red:    failure.NewRedactor(snapshotSecrets(snap)),
		detect: newDetector(),
		over:   make(map[string]pricing.Price, len(snap.Pricing)),
	}
	for name, p := range snap.Pricing {
		v.over[name] = pricing.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}
	}
	v.priceTable(e.catalogPrices())
	return v
}

// view is the view of snap. Sweep builds it on a swap; when nothing
// announced the swap, the first request on the new snapshot builds it. A
// request still running on a replaced snapshot gets a private view: what
// it learns is about a config no longer in force.
func (e *Engine) view(snap *config.Snapshot) *snapView {
	for {
		v := e.views.Load()
		if v != nil && v.snap == snap {
			return v
		}
		if e.cfg != nil && e.cfg.Current() != snap {
			return e.newSnapView(snap)
		}
		e.views.CompareAndSwap(v, e.newSnapView(snap))
	}
}

// redactor returns the failure.Redactor that knows every secret of snap:
// channel keys and the credentials inside channel and proxy URLs. It is
// built with the snapshot's view. Every upstream-derived string goes
// through it at one of these points before it leaves the engine: reject
// and relayError (the client), record.fail and attemptLog.end (the log
// row, events), strikeScope (cooldown reasons), relay (error events of a
// committed stream) and probes (ccload check, /admin).
func (e *Engine) redactor(snap *config.Snapshot) *failure.Redactor {
	return e.view(snap).red
}

// snapshotSecrets lists every channel key and URL credential of snap.
func snapshotSecrets(snap *config.Snapshot) []string {
	var out []string
	addURL := func(raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		if u.User != nil {
			out = append(out, u.User.Username())
			if pw, ok := u.User.Password(); ok {
				out = append(out, pw)
			}
		}
		for _, vs := range u.Query() {
			out = append(out, vs...)
		}
	}
	for _, ch := range snap.Channels {
		for _, k := range ch.Keys {
			out = append(out, k.Reveal())
		}
		for _, u := range ch.URLs {
			addURL(u.URL)
		}
		addURL(ch.Proxy)
	}
	return out
}

// errorKey is how an error object starts in JSON; content text that merely
// mentions "error" is escaped (\"error\") and does not match.
var errorKey = []byte(`"error"`)

// redactEvent scrubs a relayed stream chunk that carries an error object;
// others pass untouched (one byte scan).
func redactEvent(red *failure.Redactor, b []byte) []byte {
	if !bytes.Contains(b, errorKey) {
		return b
	}
	return red.Body(b)
}

// Prices returns the price table requests on snap are priced with: the
// embedded table, the price catalog's current copy on top, and the file's
// `pricing:` entries on top of both. It is built with the snapshot's view
// and again when the catalog's copy changes.
func (e *Engine) Prices(snap *config.Snapshot) *pricing.Table {
	return e.view(snap).priceTable(e.catalogPrices())
}

// catalogPrices is the price catalog's current copy, or nil.
func (e *Engine) catalogPrices() *pricing.Table {
	if e.catalog == nil {
		return nil
	}
	return e.catalog.Prices()
}

// priceTable is the view's table over the catalog copy cat.
func (v *snapView) priceTable(cat *pricing.Table) *pricing.Table {
	if b := v.prices.Load(); b != nil && b.cat == cat {
		return b.table // every request asks: no lock on the common path
	}
	b := &priceBuild{cat: cat, table: pricing.Default().WithCatalog(cat).With(v.over)}
	v.prices.Store(b) // two builders racing both build the same table; either may stay
	return b.table
}

// priceBuild is the price table built over one catalog copy.
type priceBuild struct {
	cat   *pricing.Table
	table *pricing.Table
}

// registry is all of the engine's runtime state that outlives a config
// snapshot, in one place. Everything in it is keyed by identity, never by
// a snapshot's pointers, so a reload that keeps an entity keeps its state
// (STYLE practice 7, like caddy's hosts pool), and sweep drops what belongs
// to entities the new snapshot no longer has: nothing is kept for removed
// channels, URLs, keys, models or tokens. The engine has no package-level
// caches; a new container belongs here, in sweep, and in
// TestSweepDropsRuntimeStateOfRemovedEntities (which fails on a field it
// does not know).
//
// What it holds, by key:
//
//	channel name       channelLoad (in flight, RPM), health (failure rate
//	                   for the health score), paused (runtime pauses),
//	                   lastChecks (scheduled checks), keyCursors (key
//	                   round-robin of requests and of scheduled checks)
//	channel set        wrr (smooth weighted round-robin weights per
//	                   priority group, key: channelSet)
//	channel and URL    urls (time-to-first-byte EWMA)
//	URL                urlIDs (memoized urlID, cooldown names of URLs)
//	key value          keyIDs (memoized keyID)
//	token name         tokenLoad (in flight, RPM), sockets (open
//	                   Responses WebSockets per token), wsSessions
//	                   (Responses WebSocket transcripts, per token and
//	                   Session-Id; their own bounds besides the sweep)
//	URL                wsRefused (native upstream WebSocket refused
//	                   until a time)
//	upstream model     unpriced (models already warned about)
//	token / channel    ledger (spend against cost limits, engine/spend)
//	session            pins (session affinity; swept by channel)
//	scope key          cooldowns (its own package: persisted, shared with
//	                   the admin API)
//
// In-flight requests that still hold a swept entry (a load slot, a socket
// count) finish on it unharmed: they hold the pointer, the maps only stop
// handing it out.
type registry struct {
	channelLoad loads
	health      healths
	paused      stateMap[string, time.Time]         // channel name -> time paused
	lastChecks  stateMap[string, ProbeResult]       // channel name -> last scheduled check
	keyCursors  stateMap[cursorKey, *atomic.Uint64] // key round-robin position

	wrr stateMap[channelSet, *wrrWeights] // candidates of a priority group -> current weights

	urls   stateMap[urlKey, *urlStat] // time to first byte per channel and URL
	urlIDs stateMap[string, string]   // raw URL -> urlID(raw)
	keyIDs stateMap[string, string]   // key value -> keyID(key); on every routing decision

	tokenLoad  loads
	sockets    stateMap[string, *atomic.Int64] // token name -> open sockets
	wsSessions *responsesws.Sessions
	wsRefused  stateMap[string, time.Time] // raw URL -> until when its upgrade is not asked again

	unpriced stateMap[string, bool] // upstream model -> true once warned

	ledger    *spend.Ledger
	pins      *affinity.Table
	cooldowns *cooldown.Registry
}

func newRegistry(opts Options, clk clock.Clock) *registry {
	r := &registry{
		ledger: spend.New(spend.Options{
			Costs: opts.Costs, Shared: opts.Spend, Share: opts.SharedSpend, Clock: clk, Log: opts.Logger,
		}),
		pins:      affinity.NewTable(config.DefaultRouting.Affinity.MaxSessions, config.DefaultRouting.Affinity.TTL.D()),
		cooldowns: opts.Cooldowns,
	}
	if r.cooldowns == nil {
		r.cooldowns = cooldown.New(clk, nil)
	}
	return r
}

// keyID is keyID(k), computed once per key.
func (r *registry) keyID(k config.Secret) string {
	raw := k.Reveal()
	if id, ok := r.keyIDs.load(raw); ok {
		return id
	}
	id := keyID(k)
	r.keyIDs.store(raw, id)
	return id
}

// urlID is urlID(raw), computed once per URL: masking parses the URL and
// runs regexps, and every attempt asks for the cooldown scope of each URL
// of each route (perf).
func (r *registry) urlID(raw string) string {
	if id, ok := r.urlIDs.load(raw); ok {
		return id
	}
	id := urlID(raw)
	r.urlIDs.store(raw, id)
	return id
}

// urlStat is the EWMA of one URL's time to first byte.
type urlStat struct {
	mu      sync.Mutex
	ewmaMs  float64
	samples int
}

const ewmaAlpha = 0.3

// urlKey is one URL of one channel: two channels may share a URL and
// keep their own latency for it.
type urlKey struct{ channel, url string }

func (r *registry) urlStat(channel, url string) *urlStat {
	return r.urls.get(urlKey{channel, url}, func() *urlStat { return &urlStat{} })
}

// observeURL records a latency sample for a URL.
func (r *registry) observeURL(channel, url string, ms float64) {
	u := r.urlStat(channel, url)
	u.mu.Lock()
	if u.samples == 0 {
		u.ewmaMs = ms
	} else {
		u.ewmaMs = ewmaAlpha*ms + (1-ewmaAlpha)*u.ewmaMs
	}
	u.samples++
	u.mu.Unlock()
}

// urlLatency returns the EWMA (ms) and whether the URL was ever visited.
func (r *registry) urlLatency(channel, url string) (float64, bool) {
	u := r.urlStat(channel, url)
	u.mu.Lock()
	defer u.mu.Unlock()
	return math.Max(u.ewmaMs, 1), u.samples > 0
}

// cursorKey names a key round-robin: a channel's requests, or (check)
// its scheduled checks, which turn through the keys on their own.
type cursorKey struct {
	channel string
	check   bool
}

// keyCursor returns the next round-robin start position for a channel's
// requests or (check) its scheduled checks.
func (r *registry) keyCursor(channel string, check bool) uint64 {
	return r.keyCursors.get(cursorKey{channel, check}, func() *atomic.Uint64 { return new(atomic.Uint64) }).Add(1) - 1
}

// channelSet is the identity of one priority group's candidates: their
// channel names, in order. A set of any size cannot be a struct, so the
// names are joined with NUL, a byte channel names do not use; channelSetOf
// and all are the only code that knows it.
type channelSet string

func channelSetOf(names []string) channelSet { return channelSet(strings.Join(names, "\x00")) }

// all reports whether every channel of the set passes keep.
func (s channelSet) all(keep func(name string) bool) bool {
	for name := range strings.SplitSeq(string(s), "\x00") {
		if !keep(name) {
			return false
		}
	}
	return true
}

// wrrWeights are the current weights of one candidate set's members.
type wrrWeights struct {
	mu  sync.Mutex
	cur map[string]int // channel name -> current weight
}

func newWRRWeights() *wrrWeights { return &wrrWeights{cur: map[string]int{}} }

// smoothWRR picks one member of a candidate set by smooth weighted
// round-robin (the nginx algorithm: every member gains its weight, the
// largest current weight wins and loses the total). The sequence for
// weights 5,1,1 is a a b a c a a, spreading picks instead of bursting.
// It returns the index of the winner in names.
func (r *registry) smoothWRR(set channelSet, names []string, weights []int) int {
	w := r.wrr.get(set, newWRRWeights)
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := w.cur
	best, total := -1, 0
	for i, n := range names {
		cur[n] += weights[i]
		total += weights[i]
		if best < 0 || cur[n] > cur[names[best]] {
			best = i
		}
	}
	cur[names[best]] -= total
	return best
}

// socketCount returns the open-socket count of a token.
func (r *registry) socketCount(token string) *atomic.Int64 {
	return r.sockets.get(token, func() *atomic.Int64 { return new(atomic.Int64) })
}

// healths holds the failure rate of every channel by name, for the
// health score (effectivePriority).
type healths struct {
	m stateMap[string, *health.Outcomes]
}

func (h *healths) get(name string) *health.Outcomes {
	return h.m.get(name, func() *health.Outcomes { return &health.Outcomes{} })
}

// loads holds the load of every channel and token by name, so counts
// survive config reloads like the rest of the runtime state.
type loads struct {
	m stateMap[string, *health.Load]
}

func (ls *loads) get(name string) *health.Load {
	return ls.m.get(name, func() *health.Load { return &health.Load{} })
}

// sweep drops every entry that belongs to an entity snap no longer has,
// and applies routing.affinity's bounds to the pins. Engine.Sweep calls it
// after every swap.
func (r *registry) sweep(snap *config.Snapshot) {
	channels := map[string]*config.Channel{}
	urls, rawURLs, keys, models := map[urlKey]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, ch := range snap.Channels {
		channels[ch.Name] = ch
		for _, u := range ch.URLs {
			urls[urlKey{ch.Name, u.URL}] = true
			rawURLs[u.URL] = true
		}
		for _, k := range ch.Keys {
			keys[k.Reveal()] = true
		}
		for _, m := range ch.Models {
			models[m.Upstream] = true
			models[m.Name] = true
		}
	}
	tokens := map[string]bool{}
	for _, t := range snap.Tokens {
		tokens[t.Name] = true
	}
	hasChannel := func(name string) bool { return channels[name] != nil }
	hasToken := func(name string) bool { return tokens[name] }
	hasURL := func(raw string) bool { return rawURLs[raw] }

	r.channelLoad.m.sweep(hasChannel)
	r.health.m.sweep(hasChannel)
	r.paused.sweep(hasChannel)
	r.lastChecks.sweep(hasChannel)
	r.keyCursors.sweep(func(k cursorKey) bool { return hasChannel(k.channel) })
	r.urls.sweep(func(k urlKey) bool { return urls[k] })
	r.urlIDs.sweep(hasURL)
	r.keyIDs.sweep(func(raw string) bool { return keys[raw] })
	r.tokenLoad.m.sweep(hasToken)
	r.sockets.sweep(hasToken)
	r.wsSessions.DropTokens(hasToken)
	r.wsRefused.sweep(hasURL)
	r.unpriced.sweep(func(model string) bool { return models[model] })

	r.wrr.sweep(func(s channelSet) bool { return s.all(hasChannel) })

	r.ledger.Sweep(tokens, channels)

	a := snap.Routing.Affinity
	r.pins.Resize(a.MaxSessions, a.TTL.D())
	r.pins.Sweep(func(name string) bool { return channels[name] != nil })

	r.cooldowns.Sweep(func(k cooldown.Key) bool { return r.keepCooldown(channels[k.Channel], k) })
}

// keepCooldown reports whether a cooldown's scope still exists in ch.
func (r *registry) keepCooldown(ch *config.Channel, k cooldown.Key) bool {
	if ch == nil {
		return false
	}
	switch k.Scope {
	case failure.ScopeKey:
		for _, key := range ch.Keys {
			if r.keyID(key) == k.KeyFP {
				return true
			}
		}
		return false
	case failure.ScopeURL:
		for _, u := range ch.URLs {
			if r.urlID(u.URL) == k.URL {
				return true
			}
		}
		return false
	case failure.ScopeModel:
		for _, m := range ch.Models {
			if m.Upstream == k.Model {
				return true
			}
		}
		return false
	}
	return true
}

// keyID identifies a key in runtime state and logs without revealing it:
// its display fingerprint ("sk-a…f3c9") plus 8 hex digits of its sha256,
// because two keys of one channel often share their first and last four
// characters, and cooldowns must never be confused between them. The
// registry memoizes it per key.
func keyID(k config.Secret) string {
	if k == config.ClientKey {
		return "client"
	}
	if _, ok := config.AccountOf(k); ok {
		// An account's placeholder names no secret: the account shows
		// as itself in cooldowns, logs and the dashboard.
		return k.Reveal()
	}
	sum := sha256.Sum256([]byte(k.Reveal()))
	return k.String() + "#" + hex.EncodeToString(sum[:4])
}

// urlID identifies a URL in cooldowns (kept in memory, in the database and
// shown by /admin) without the credentials it may carry (?key=, user:pass@):
// the masked URL plus " #" and 8 hex digits of the full URL's sha256, so
// two URLs that differ only in their key stay apart. The
// registry memoizes it per URL.
func urlID(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return config.MaskURL(raw) + " #" + hex.EncodeToString(sum[:4])
}

// stateMap is one of the registry's containers: a concurrent map with
// typed keys and values (a sync.Map underneath, as each key is written
// once and then read on every request). Keys are the entity's identity
// (a name, a raw URL, a struct of both), never a snapshot's pointer, so
// sweep can tell which entity an entry belongs to.
type stateMap[K comparable, V any] struct{ m sync.Map }

func (s *stateMap[K, V]) load(k K) (V, bool) {
	v, ok := s.m.Load(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

func (s *stateMap[K, V]) store(k K, v V) { s.m.Store(k, v) }

func (s *stateMap[K, V]) delete(k K) { s.m.Delete(k) }

// loadOrStore returns the value k has, or stores v; loaded says which.
func (s *stateMap[K, V]) loadOrStore(k K, v V) (V, bool) {
	got, loaded := s.m.LoadOrStore(k, v)
	return got.(V), loaded
}

// get returns k's value, storing make's the first time. The fast path
// allocates nothing.
func (s *stateMap[K, V]) get(k K, make func() V) V {
	if v, ok := s.m.Load(k); ok {
		return v.(V)
	}
	v, _ := s.m.LoadOrStore(k, make())
	return v.(V)
}

// sweep deletes every entry whose key keep refuses.
func (s *stateMap[K, V]) sweep(keep func(K) bool) {
	s.m.Range(func(k, _ any) bool {
		if !keep(k.(K)) {
			s.m.Delete(k)
		}
		return true
	})
}

// keys lists the keys, in no order.
func (s *stateMap[K, V]) keys() []K {
	var out []K
	s.m.Range(func(k, _ any) bool {
		out = append(out, k.(K))
		return true
	})
	return out
}

// ChannelState is a channel's live state for the admin API and CLI.
type ChannelState struct {
	Name      string           `json:"name"`
	Enabled   bool             `json:"enabled"`
	Paused    bool             `json:"paused"` // runtime override, not in the YAML
	InFlight  int64            `json:"in_flight"`
	RPM       int              `json:"rpm"`
	URLs      []URLState       `json:"urls"`
	Cooldowns []cooldown.Entry `json:"cooldowns"`
	LastCheck *ProbeResult     `json:"last_check,omitempty"` // latest scheduled check
	// Unpriced lists the enabled models no price layer prices.
	Unpriced []string `json:"unpriced,omitempty"`
}

// URLState is one channel URL's observed latency, and for a URL that
// declares no protocols what detection learned (detect.go).
type URLState struct {
	URL      string      `json:"url"`
	EWMAms   float64     `json:"ewma_ms"`
	Visited  bool        `json:"visited"`
	Detected []Detection `json:"detected,omitempty"`
}

// ChannelStates lists every channel of the current snapshot with its live
// state, in file order.
func (e *Engine) ChannelStates() []ChannelState {
	snap := e.cfg.Current()
	now := e.clock.Now()
	byChannel := map[string][]cooldown.Entry{}
	for _, c := range e.reg.cooldowns.List() {
		byChannel[c.Key.Channel] = append(byChannel[c.Key.Channel], c)
	}
	out := make([]ChannelState, 0, len(snap.Channels))
	prices := e.Prices(snap)
	for _, ch := range snap.Channels {
		l := e.reg.channelLoad.get(ch.Name)
		st := ChannelState{
			Name: ch.Name, Enabled: ch.Enabled, Paused: e.Paused(ch.Name),
			InFlight: l.InFlight(), RPM: l.RPM(now), Cooldowns: byChannel[ch.Name],
			Unpriced: UnpricedModels(prices, ch),
		}
		for _, u := range ch.URLs {
			ms, visited := e.reg.urlLatency(ch.Name, u.URL)
			if !visited {
				ms = 0
			}
			st.URLs = append(st.URLs, URLState{URL: u.URL, EWMAms: ms, Visited: visited, Detected: e.Detected(ch.Name, u.URL)})
		}
		if res, ok := e.LastCheck(ch.Name); ok {
			st.LastCheck = &res
		}
		sort.Slice(st.Cooldowns, func(i, j int) bool { return st.Cooldowns[i].Until.Before(st.Cooldowns[j].Until) })
		out = append(out, st)
	}
	return out
}

// TokenLoad is a token's in-flight count and requests in the last minute.
func (e *Engine) TokenLoad(name string) (inFlight int64, rpm int) {
	l := e.reg.tokenLoad.get(name)
	return l.InFlight(), l.RPM(e.clock.Now())
}

// SetPaused pauses or resumes a channel at runtime. The YAML stays the
// source of truth: callers persist the override (store.Override) and show
// it as such.
func (e *Engine) SetPaused(channel string, paused bool) {
	if paused {
		e.reg.paused.store(channel, time.Now())
	} else {
		e.reg.paused.delete(channel)
	}
}

// Paused reports whether a channel is paused at runtime.
func (e *Engine) Paused(channel string) bool {
	_, ok := e.reg.paused.load(channel)
	return ok
}

// Sweep drops the runtime state and cooldowns whose channel, key, URL,
// model or token is gone from snap (registry.sweep; call it after a
// reload), and the upstream clients, with their idle connections, of
// proxies no channel uses any more; state of unchanged entities stays.
func (e *Engine) Sweep(snap *config.Snapshot) {
	e.reg.sweep(snap)
	e.upstream.Keep(snapshotProxies(snap))
	e.view(snap) // built now rather than by the first request on snap
}

// RunSpend writes this instance's spend to the shared spend store and,
// with storage.shared, reads the cluster's totals back, every spend.Every
// until ctx ends (spend.Ledger.Run); without a spend store it returns at
// once.
func (e *Engine) RunSpend(ctx context.Context) { e.reg.ledger.Run(ctx) }
