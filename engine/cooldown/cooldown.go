// Package cooldown is the in-memory registry of cooling components (keys,
// models, URLs, channels) that the engine consults on every attempt.
//
// It is safe for concurrent use, reads time only from an injected Clock, and
// mirrors every change to an optional Persister (the store) through a
// bounded queue, so that a slow database never delays a request. At start
// the engine warms it with Load; after a config reload it drops vanished
// entities with Sweep. Runtime state is keyed by identity and survives
// reloads (STYLE practice 7).
//
// # Backoff
//
// A Strike on a key that is not cooling adds a strike and cools the key for
//
//	Initial[kind] * 2^(strikes-1), bounded by [Min, Max]
//
// unless the failure carries an upstream reset hint (Outcome.RetryAfter),
// which is used as is, even above Max or below Min: an explicit reset time
// wins (design §6). Failures that land while the key is already cooling come
// from requests sent before the cooldown began; they do not add a strike and
// only extend the cooldown to what the current strike count (or their hint)
// asks. Success forgets the key. A key whose last cooldown ended more than
// Max ago (a day when Max is unbounded) starts again from one strike.
package cooldown

import (
	"cmp"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/internal/clock"
)

// Key names one cooling component. Only the parts of its scope are set:
// ScopeKey uses Channel and KeyFP, ScopeModel Channel and Model, ScopeURL
// Channel and URL, ScopeChannel Channel. The registry normalizes every key it
// is given, so callers may pass a fuller tuple.
type Key struct {
	Scope   failure.Scope
	Channel string
	KeyFP   string // key fingerprint, never the key itself
	Model   string // upstream model name
	URL     string
}

// Normalize returns k with only the parts of its scope set. A key of an
// unknown scope is returned unchanged.
func (k Key) Normalize() Key {
	n := Key{Scope: k.Scope, Channel: k.Channel}
	switch k.Scope {
	case failure.ScopeKey:
		n.KeyFP = k.KeyFP
	case failure.ScopeModel:
		n.Model = k.Model
	case failure.ScopeURL:
		n.URL = k.URL
	case failure.ScopeChannel:
	default:
		return k
	}
	return n
}

// String is a short form for logs: "model:ch/claude-x".
func (k Key) String() string {
	k = k.Normalize()
	s := string(k.Scope) + ":" + k.Channel
	for _, part := range []string{k.KeyFP, k.Model, k.URL} {
		if part != "" {
			s += "/" + part
		}
	}
	return s
}

// Entry is one component's cooldown state.
type Entry struct {
	Key     Key
	Until   time.Time    // cooling while now is before Until
	Strikes int          // consecutive failures without a success
	Kind    failure.Kind // of the last failure
	Reason  string       // short text of the last failure (Outcome.Message)
	// Hinted: the last failure carried the upstream's own reset time.
	Hinted bool

	hardStrikes int       // consecutive failures with a hard reason (state.go)
	trialUntil  time.Time // a half-open trial is out until then (state.go)
}

// Policy sets cooldown lengths; the engine builds it from routing.cooldown.
//
// Initial is looked up by the failure's kind. A kind without a value falls
// back: network to timeout, then server; timeout and not_found to server;
// then any kind to Min, then to one minute. Max <= 0 means no upper bound
// other than a day.
type Policy struct {
	Initial  map[failure.Kind]time.Duration
	Min, Max time.Duration
}

// unbounded stands in for Max when Max is not set.
const unbounded = 24 * time.Hour

// lastResort is the initial cooldown when the policy has none for a kind.
const lastResort = time.Minute

var kindFallbacks = map[failure.Kind][]failure.Kind{
	failure.KindNetwork:  {failure.KindTimeout, failure.KindServer},
	failure.KindTimeout:  {failure.KindServer},
	failure.KindNotFound: {failure.KindServer},
}

func (p Policy) max() time.Duration {
	if p.Max > 0 {
		return p.Max
	}
	return unbounded
}

func (p Policy) initial(k failure.Kind) time.Duration {
	if d := p.Initial[k]; d > 0 {
		return d
	}
	for _, f := range kindFallbacks[k] {
		if d := p.Initial[f]; d > 0 {
			return d
		}
	}
	if p.Min > 0 {
		return p.Min
	}
	return lastResort
}

// Backoff is the cooldown for the given strike (1 = first failure) of a
// failure of kind k, before any upstream hint.
func (p Policy) Backoff(k failure.Kind, strikes int) time.Duration {
	d, hi := p.initial(k), p.max()
	for i := 1; i < strikes && d < hi; i++ {
		d *= 2
	}
	return min(max(d, p.Min), hi)
}

// Persister is the store's side of the registry. Calls come from one
// goroutine, in the order of the changes, never under the registry's lock.
// Errors are logged and otherwise ignored.
type Persister interface {
	Save(Entry) error
	Delete(Key) error
}

// queueSize bounds the writes waiting for the Persister. When it is full a
// write is dropped and logged: the database is a mirror, memory is the truth.
const queueSize = 1024

type write struct {
	del   bool
	entry Entry
}

// Registry holds cooldowns in memory. The zero value is not usable; call New.
type Registry struct {
	clock clock.Clock
	log   *slog.Logger

	mu      sync.RWMutex
	entries map[Key]*Entry
	closed  bool

	writes chan write    // nil without a Persister
	done   chan struct{} // closed when the writer has drained writes
}

// Option configures New.
type Option func(*Registry)

// WithLogger sets where persistence failures are logged (default
// slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(r *Registry) {
		if l != nil {
			r.log = l
		}
	}
}

// New returns an empty registry. clock nil means the wall clock; p may be
// nil. With a Persister, call Close at shutdown to flush pending writes.
func New(clk clock.Clock, p Persister, opts ...Option) *Registry {
	if clk == nil {
		clk = clock.Wall{}
	}
	r := &Registry{clock: clk, log: slog.Default(), entries: map[Key]*Entry{}}
	for _, o := range opts {
		o(r)
	}
	if p != nil {
		r.writes = make(chan write, queueSize)
		r.done = make(chan struct{})
		go r.writer(p)
	}
	return r
}

// Strike records a failure of k and returns its new state. It ignores keys
// without a scope and outcomes that blame no component (success, client
// fault, cancellation), returning a zero Entry.
func (r *Registry) Strike(k Key, o failure.Outcome, pol Policy) Entry {
	if k.Scope == failure.ScopeNone || o.Kind == failure.KindOK || o.ClientFault || o.Kind == failure.KindCanceled {
		return Entry{}
	}
	k = k.Normalize()
	now := r.clock.Now()
	reason := o.Message
	if reason == "" {
		reason = string(o.Kind)
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.entries[k]
	if !ok {
		e = &Entry{Key: k}
		r.entries[k] = e
	}
	cooling := now.Before(e.Until)
	switch {
	case cooling:
		// A request sent before the cooldown began: same episode.
	case e.Strikes > 0 && now.Sub(e.Until) > pol.max():
		e.Strikes = 1 // long quiet since the last cooldown: start over
	default:
		e.Strikes++
	}
	e.Strikes = max(e.Strikes, 1)

	until := now.Add(pol.Backoff(o.Kind, e.Strikes))
	switch {
	case o.RetryAfter > 0:
		until = now.Add(o.RetryAfter) // design §6: an explicit reset wins
	case cooling && e.Until.After(until):
		until = e.Until
	}
	e.Until, e.Kind, e.Reason, e.Hinted = until, o.Kind, reason, o.RetryAfter > 0
	e.trialUntil = time.Time{}
	switch {
	case !hardReason(k.Scope, o.Kind, e.Hinted):
		e.hardStrikes = 0
	case !cooling:
		e.hardStrikes++
	default:
		e.hardStrikes = max(e.hardStrikes, 1)
	}
	out := *e
	r.enqueue(write{entry: out})
	return out
}

// Success forgets k: its strikes and any cooldown.
func (r *Registry) Success(k Key) {
	k = k.Normalize()
	r.mu.RLock()
	_, ok := r.entries[k]
	r.mu.RUnlock()
	if !ok {
		return // the common case, without the write lock
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.entries[k]; ok {
		delete(r.entries, k)
		r.enqueue(write{del: true, entry: Entry{Key: k}})
	}
}

// Until reports whether k is cooling now, and until when. When it is not,
// the time is zero.
func (r *Registry) Until(k Key) (time.Time, bool) {
	k = k.Normalize()
	now := r.clock.Now()
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e, ok := r.entries[k]; ok && now.Before(e.Until) {
		return e.Until, true
	}
	return time.Time{}, false
}

// Clear removes k's cooldown and strikes (the dashboard's "clear" action).
// It reports whether k was cooling.
func (r *Registry) Clear(k Key) bool {
	k = k.Normalize()
	now := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.entries[k]
	if !ok {
		return false
	}
	delete(r.entries, k)
	r.enqueue(write{del: true, entry: Entry{Key: k}})
	return now.Before(e.Until)
}

// List returns the entries cooling now, soonest to recover first.
func (r *Registry) List() []Entry {
	now := r.clock.Now()
	r.mu.RLock()
	out := make([]Entry, 0, len(r.entries))
	for _, e := range r.entries {
		if now.Before(e.Until) {
			out = append(out, *e)
		}
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b Entry) int {
		if c := a.Until.Compare(b.Until); c != 0 {
			return c
		}
		return cmp.Compare(a.Key.String(), b.Key.String())
	})
	return out
}

// Load warms the registry from the database at start. Entries already known
// keep the later Until. Nothing is written back.
func (r *Registry) Load(entries []Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range entries {
		if e.Key.Scope == failure.ScopeNone {
			continue
		}
		e.Key = e.Key.Normalize()
		if old, ok := r.entries[e.Key]; ok && !e.Until.After(old.Until) {
			continue
		}
		r.entries[e.Key] = &e
	}
}

// Apply sets k's entry to what another instance decided (storage.shared:
// the change feed), replacing what this instance had. Like Load, nothing is
// written back: the change came from the database, and writing it again
// would echo it around the cluster. A remote cooldown of a hard reason
// counts as confirmed when the sender had confirmed it.
func (r *Registry) Apply(e Entry, confirmed bool) {
	if e.Key.Scope == failure.ScopeNone {
		return
	}
	e.Key = e.Key.Normalize()
	e.hardStrikes, e.trialUntil = 0, time.Time{}
	if confirmed {
		e.hardStrikes = ConfirmStrikes
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries[e.Key] = &e
}

// Forget removes k's entry because another instance cleared it or saw it
// succeed. Nothing is written back (see Apply).
func (r *Registry) Forget(k Key) {
	k = k.Normalize()
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.entries, k)
}

// Sweep drops the entries for which keep returns false, such as those of a
// channel, key, model or URL that a config reload removed. keep is called
// without the registry's lock held.
func (r *Registry) Sweep(keep func(Key) bool) {
	r.mu.RLock()
	keys := make([]Key, 0, len(r.entries))
	for k := range r.entries {
		keys = append(keys, k)
	}
	r.mu.RUnlock()

	var drop []Key
	for _, k := range keys {
		if !keep(k) {
			drop = append(drop, k)
		}
	}
	if len(drop) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range drop {
		if _, ok := r.entries[k]; ok {
			delete(r.entries, k)
			r.enqueue(write{del: true, entry: Entry{Key: k}})
		}
	}
}

// AllCooling reports whether every one of keys is cooling now, and if so
// when the first of them recovers. The engine uses it to promote a model or
// key scope to the whole channel (design §6). No keys means false.
func (r *Registry) AllCooling(keys []Key) (soonest time.Time, all bool) {
	if len(keys) == 0 {
		return time.Time{}, false
	}
	now := r.clock.Now()
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, k := range keys {
		e, ok := r.entries[k.Normalize()]
		if !ok || !now.Before(e.Until) {
			return time.Time{}, false
		}
		if soonest.IsZero() || e.Until.Before(soonest) {
			soonest = e.Until
		}
	}
	return soonest, true
}

// Close stops persisting: it waits until the queued writes have reached the
// Persister. Later changes stay in memory only. Close is idempotent.
func (r *Registry) Close() error {
	if r.writes == nil {
		return nil
	}
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.writes)
	}
	r.mu.Unlock()
	<-r.done
	return nil
}

// enqueue hands a change to the writer without ever blocking. It is called
// with r.mu held, so writes are queued in the order the changes were made.
func (r *Registry) enqueue(w write) {
	if r.writes == nil || r.closed {
		return
	}
	select {
	case r.writes <- w:
	default:
		r.log.Warn("cooldown: persistence queue full; change kept in memory only",
			"key", w.entry.Key.String(), "delete", w.del)
	}
}

// writer is the only caller of the Persister.
func (r *Registry) writer(p Persister) {
	defer close(r.done)
	for w := range r.writes {
		var err error
		if w.del {
			err = p.Delete(w.entry.Key)
		} else {
			err = p.Save(w.entry)
		}
		if err != nil {
			r.log.Warn("cooldown: persisting failed", "key", w.entry.Key.String(), "delete", w.del, "err", err)
		}
	}
}
