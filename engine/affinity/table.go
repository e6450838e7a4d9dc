package affinity

import (
	"container/list"
	"crypto/sha256"
	"sync"
	"time"
)

// Route is where a session's last success was served.
type Route struct {
	Channel string
	Key     string // key identity (fingerprint#hash), never the key
	URL     string // URL identity (urlID: masked, with a hash), never the raw URL
}

// Table maps (token, session) to the route of the session's last success.
// It is safe for concurrent use; every operation is O(1) under one mutex.
type Table struct {
	mu      sync.Mutex
	max     int
	ttl     time.Duration
	entries map[[16]byte]*list.Element
	lru     list.List      // front = most recently used; values are *entry
	counts  map[string]int // pinned sessions per channel
}

type entry struct {
	key  [16]byte
	rt   Route
	used time.Time
	sent time.Time // when Pin last asked for this pin to be shared
}

// SessionKey is the table's key of a session: a hash, safe to share
// between instances (it reveals neither the token nor the session id).
type SessionKey = [16]byte

// NewTable returns a table holding at most max sessions, each forgotten
// after ttl without use.
func NewTable(max int, ttl time.Duration) *Table {
	return &Table{max: max, ttl: ttl, entries: map[[16]byte]*list.Element{}, counts: map[string]int{}}
}

// Resize changes the bounds (on a config reload), evicting what no longer
// fits.
func (t *Table) Resize(max int, ttl time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.max, t.ttl = max, ttl
	for t.lru.Len() > t.max {
		t.remove(t.lru.Back())
	}
}

// Key is the table's key of a session of token, for GetKey and PinKey (a
// request that looks its pin up and then pins hashes once). Token and
// session are hashed together, so one token's session id can never select
// another token's pin, and the table's memory does not depend on how long
// clients make their ids. The parts are joined by NUL bytes, so
// Key(t, a, b) is Key(t, a+"\x00"+b).
func Key(token string, session ...string) SessionKey {
	var buf [256]byte // token and session ids are short: no allocation
	b := append(buf[:0], token...)
	for _, s := range session {
		b = append(append(b, 0), s...)
	}
	sum := sha256.Sum256(b)
	var k [16]byte
	copy(k[:], sum[:])
	return k
}

// Get returns the pinned route of a session, if one is known and fresh.
func (t *Table) Get(token, session string, now time.Time) (Route, bool) {
	if session == "" {
		return Route{}, false
	}
	return t.GetKey(Key(token, session), now)
}

// GetKey is Get by the session's Key.
func (t *Table) GetKey(k SessionKey, now time.Time) (Route, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	el, ok := t.entries[k]
	if !ok {
		return Route{}, false
	}
	e := el.Value.(*entry)
	if now.Sub(e.used) > t.ttl {
		t.remove(el)
		return Route{}, false
	}
	return e.rt, true
}

// Pin records the route that just served a session. It returns the
// session's key and whether other instances should hear of the pin
// (storage.shared): when it is new, when its route changed, and again
// after half the TTL, so that their copies do not expire while the session
// stays on this instance.
func (t *Table) Pin(token, session string, rt Route, now time.Time) (SessionKey, bool) {
	if session == "" {
		return SessionKey{}, false
	}
	k := Key(token, session)
	return k, t.PinKey(k, rt, now)
}

// PinKey is Pin by the session's Key; it reports whether the pin should
// be shared.
func (t *Table) PinKey(k SessionKey, rt Route, now time.Time) bool {
	if t.max <= 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.put(k, rt, now)
	if e.sent.IsZero() || now.Sub(e.sent) > t.ttl/2 {
		e.sent = now
		return true
	}
	return false
}

// Put records a pin another instance shared; unlike Pin it never asks for
// it to be shared again.
func (t *Table) Put(k SessionKey, rt Route, now time.Time) {
	if t.max <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.put(k, rt, now).sent = now
}

// put creates or updates k's entry; a changed route clears sent. It is
// called with t.mu held.
func (t *Table) put(k SessionKey, rt Route, now time.Time) *entry {
	if el, ok := t.entries[k]; ok {
		e := el.Value.(*entry)
		if e.rt != rt {
			e.sent = time.Time{}
		}
		if e.rt.Channel != rt.Channel {
			t.counts[e.rt.Channel]--
			t.counts[rt.Channel]++
		}
		e.rt, e.used = rt, now
		t.lru.MoveToFront(el)
		return e
	}
	e := &entry{key: k, rt: rt, used: now}
	t.entries[k] = t.lru.PushFront(e)
	t.counts[rt.Channel]++
	for t.lru.Len() > t.max {
		t.remove(t.lru.Back())
	}
	// Drop expired sessions from the cold end, a few at a time, so the
	// counts behind the share cap do not remember idle sessions.
	for i := 0; i < 4; i++ {
		back := t.lru.Back()
		if back == nil || now.Sub(back.Value.(*entry).used) <= t.ttl {
			break
		}
		t.remove(back)
	}
	return e
}

// Forget drops a session's pin.
func (t *Table) Forget(token, session string) {
	k := Key(token, session)
	t.mu.Lock()
	defer t.mu.Unlock()
	if el, ok := t.entries[k]; ok {
		t.remove(el)
	}
}

func (t *Table) remove(el *list.Element) {
	e := el.Value.(*entry)
	t.lru.Remove(el)
	delete(t.entries, e.key)
	if t.counts[e.rt.Channel]--; t.counts[e.rt.Channel] <= 0 {
		delete(t.counts, e.rt.Channel)
	}
}

// Share is the fraction of the sessions pinned to any of channels that are
// pinned to channel, and that total. The engine lets a session go when its
// channel's share among equally good channels is over routing.affinity's
// max_share.
func (t *Table) Share(channel string, channels []string) (share float64, total int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range channels {
		total += t.counts[c]
	}
	if total == 0 {
		return 0, 0
	}
	return float64(t.counts[channel]) / float64(total), total
}

// Len is the number of pinned sessions.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lru.Len()
}

// Sweep forgets the pins of channels that no longer exist (a reload
// removed them).
func (t *Table) Sweep(exists func(channel string) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for el := t.lru.Front(); el != nil; {
		next := el.Next()
		if !exists(el.Value.(*entry).rt.Channel) {
			t.remove(el)
		}
		el = next
	}
}
