package responsesws

import (
	"container/list"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccload/ccload/config"
)

// Sessions holds the response chains of every socket: for each response
// id ccload produced, the whole transcript (input and output items) a
// later turn naming it continues, so any candidate can serve that turn.
//
// Chains are grouped in sessions. A session is keyed by the client token
// and the socket's Session-Id (else Thread-Id) header, so a new socket of
// the same Codex session continues where the last one stopped, and
// another token naming the same Session-Id gets a session of its own: no
// transcript ever crosses tokens. A socket without either header has a
// session of its own that goes when it closes.
//
// Bounds (server.websockets), applied when a chain is stored or looked
// up:
//   - session_ttl: a session no turn used for that long is forgotten;
//   - max_sessions: past it the least recently used session is forgotten;
//   - max_transcript_bytes: a session's chains are forgotten oldest first
//     until the new one fits (the socket refuses a turn whose transcript
//     alone is larger, before storing it);
//   - max_total_transcript_bytes: past it the least recently used other
//     sessions are forgotten.
//
// A turn naming a forgotten id gets previous_response_not_found; the
// client resends the whole input, as it would to OpenAI.
type Sessions struct {
	mu    sync.Mutex
	m     map[string]*session
	lru   list.List // of *session, most recently used first
	bytes int64
	stats *Stats
}

type session struct {
	key, token string
	chains     map[string]*list.Element // of *chain
	order      list.List                // of *chain, most recently used first
	bytes      int64
	used       time.Time
	el         *list.Element
}

type chain struct {
	id    string
	items [][]byte // immutable once stored: sockets share them
	bytes int64
}

// chainOverhead is what a chain is counted for besides its items, so
// empty chains (warm-ups) are bounded too.
const chainOverhead = 64

// NewSessions returns an empty store reporting to stats.
func NewSessions(stats *Stats) *Sessions {
	return &Sessions{m: map[string]*session{}, stats: stats}
}

// SessionKey is the store key of a socket's session: token and session
// header never combine across tokens.
func SessionKey(token, session string) string { return token + "\x00" + session }

// get returns the transcript behind id in the session key, and marks both
// used.
func (s *Sessions) get(b config.WebSockets, key, id string, now time.Time) ([][]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(b.SessionTTL.D(), now)
	ss := s.m[key]
	if ss == nil {
		return nil, false
	}
	el, ok := ss.chains[id]
	if !ok {
		return nil, false
	}
	ss.order.MoveToFront(el)
	s.touchLocked(ss, now)
	return el.Value.(*chain).items, true
}

// Put stores items as the transcript behind id in the session key
// (creating it for token), then applies the bounds.
func (s *Sessions) Put(b config.WebSockets, key, token, id string, items [][]byte, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(b.SessionTTL.D(), now)
	ss := s.m[key]
	if ss == nil {
		ss = &session{key: key, token: token, chains: map[string]*list.Element{}}
		ss.el = s.lru.PushFront(ss)
		s.m[key] = ss
		s.stats.Sessions.Add(1)
	}
	s.touchLocked(ss, now)
	if el, ok := ss.chains[id]; ok {
		s.dropChainLocked(ss, el)
	}
	c := &chain{id: id, items: items, bytes: size(items) + chainOverhead + int64(len(id))}
	ss.chains[id] = ss.order.PushFront(c)
	ss.bytes += c.bytes
	s.bytes += c.bytes
	s.stats.TranscriptBytes.Add(c.bytes)

	if max := int64(b.MaxTranscriptBytes); max > 0 {
		for ss.bytes > max && ss.order.Len() > 1 {
			s.dropChainLocked(ss, ss.order.Back())
		}
	}
	for b.MaxSessions > 0 && len(s.m) > b.MaxSessions {
		s.dropSessionLocked(s.oldestOtherLocked(ss))
	}
	if max := int64(b.MaxTotalTranscriptBytes); max > 0 {
		for s.bytes > max && len(s.m) > 1 {
			s.dropSessionLocked(s.oldestOtherLocked(ss))
		}
	}
}

// Tokens lists the token of each session held.
func (s *Sessions) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.m))
	for _, ss := range s.m {
		out = append(out, ss.token)
	}
	return out
}

// Drop forgets the session key (its socket closed).
func (s *Sessions) Drop(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.m[key]; ss != nil {
		s.dropSessionLocked(ss)
	}
}

// DropTokens forgets the sessions of tokens keep says no longer exist
// (after a reload removed them).
func (s *Sessions) DropTokens(keep func(token string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ss := range s.m {
		if !keep(ss.token) {
			s.dropSessionLocked(ss)
		}
	}
}

// Expire forgets the sessions unused for ttl, so the gauges read at
// scrape time do not count sessions nobody can use any more.
func (s *Sessions) Expire(ttl time.Duration, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(ttl, now)
}

func (s *Sessions) expireLocked(ttl time.Duration, now time.Time) {
	if ttl <= 0 {
		return
	}
	for el := s.lru.Back(); el != nil; el = s.lru.Back() {
		ss := el.Value.(*session)
		if now.Sub(ss.used) < ttl {
			return
		}
		s.dropSessionLocked(ss)
	}
}

func (s *Sessions) touchLocked(ss *session, now time.Time) {
	ss.used = now
	s.lru.MoveToFront(ss.el)
}

// oldestOtherLocked is the least recently used session other than keep;
// there is one whenever the store holds more than one session.
func (s *Sessions) oldestOtherLocked(keep *session) *session {
	for el := s.lru.Back(); el != nil; el = el.Prev() {
		if ss := el.Value.(*session); ss != keep {
			return ss
		}
	}
	return nil
}

func (s *Sessions) dropChainLocked(ss *session, el *list.Element) {
	c := ss.order.Remove(el).(*chain)
	delete(ss.chains, c.id)
	ss.bytes -= c.bytes
	s.bytes -= c.bytes
	s.stats.TranscriptBytes.Add(-c.bytes)
}

func (s *Sessions) dropSessionLocked(ss *session) {
	if ss == nil || s.m[ss.key] != ss {
		return
	}
	delete(s.m, ss.key)
	s.lru.Remove(ss.el)
	s.bytes -= ss.bytes
	s.stats.TranscriptBytes.Add(-ss.bytes)
	s.stats.Sessions.Add(-1)
}

func size(items [][]byte) int64 {
	var n int64
	for _, it := range items {
		n += int64(len(it)) + 1
	}
	return n
}

// Stats are the transport's gauges and counters, for /metrics and
// /admin/status.
type Stats struct {
	Sockets         atomic.Int64 // open downstream sockets
	Sessions        atomic.Int64 // sessions the store holds (all tokens)
	TranscriptBytes atomic.Int64 // bytes their chains hold (items plus a small overhead per chain)
	Turns           atomic.Int64 // response.create frames served (warm-ups included)
	Refused         atomic.Int64 // upgrades refused by a socket limit
}
