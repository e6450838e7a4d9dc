package admin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/ccload/ccload/store"
)

// Admin sessions live in the database (store.Sessions), so that every
// instance sharing it accepts a login made on any of them, and a logout or
// a password change ends the session everywhere. The database
// sees only hashes: the row is keyed by sha256(token) and carries
// sha256(token, sha256(admin_password)), which binds the session to the
// password it was opened with without telling anything about the
// password to someone who reads the table but has no token.
//
// Each instance caches what it read for sessionFresh, so a dashboard that
// polls does not query the database on every call, and a logout on another
// instance is seen within that time.
//
// When the database does not answer, the last answer read for the token
// stands (expiry and password are still checked locally): open dashboards
// keep working through an outage, a logout made here stays effective here,
// and a new login fails with 503 until the database is back (the password
// as a Bearer token still works).
const (
	sessionFresh   = time.Second
	sessionTimeout = 2 * time.Second // one database read or write of a session
	maxCached      = 1024            // cached answers, live sessions and unknown tokens together
	pruneEvery     = time.Minute     // expired rows are deleted at a login at most this often
)

type sessions struct {
	st  store.Sessions
	ttl time.Duration
	log *slog.Logger

	mu        sync.Mutex
	cache     map[[32]byte]cachedSession // keyed by sha256(token)
	lastPrune time.Time
	lastWarn  time.Time
}

// cachedSession is the last database answer for one token.
type cachedSession struct {
	found bool     // a row exists; false for unknown and logged-out tokens
	gone  bool     // logged out on this instance: never read again
	tag   [32]byte // the row's password tag
	exp   time.Time
	read  time.Time // when it was read; it is trusted for sessionFresh
}

func newSessions(st store.Sessions, ttl time.Duration, log *slog.Logger) *sessions {
	return &sessions{st: st, ttl: ttl, log: log, cache: map[[32]byte]cachedSession{}}
}

// passwordTag binds a session token to the admin password's sha256.
func passwordTag(token string, pw [32]byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(token))
	h.Write([]byte{0})
	h.Write(pw[:])
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// create stores a new session opened with the password whose sha256 is pw
// and returns its token and expiry. It fails when the database does.
func (ss *sessions) create(now time.Time, pw [32]byte) (string, time.Time, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", time.Time{}, err
	}
	token := hex.EncodeToString(b[:])
	k, tag, exp := sha256.Sum256([]byte(token)), passwordTag(token, pw), now.Add(ss.ttl)
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	err := ss.st.CreateSession(ctx, store.AdminSession{
		ID: hex.EncodeToString(k[:]), PasswordTag: hex.EncodeToString(tag[:]), Created: now, Expires: exp})
	if err != nil {
		return "", time.Time{}, err
	}
	ss.put(k, cachedSession{found: true, tag: tag, exp: exp, read: now})
	ss.prune(ctx, now)
	return token, exp, nil
}

// prune deletes expired rows, at most every pruneEvery per instance.
func (ss *sessions) prune(ctx context.Context, now time.Time) {
	ss.mu.Lock()
	due := now.Sub(ss.lastPrune) >= pruneEvery
	if due {
		ss.lastPrune = now
	}
	ss.mu.Unlock()
	if !due {
		return
	}
	if _, err := ss.st.PruneSessions(ctx, now); err != nil {
		ss.log.Warn("could not delete expired admin sessions", "err", err)
	}
}

// valid reports whether token is a live session opened with the password
// whose sha256 is pw.
func (ss *sessions) valid(token string, now time.Time, pw [32]byte) bool {
	if !wellFormed(token) {
		// Not a token create made: no database read for it. Only a
		// cookie of the right shape costs a query (and its answer is
		// cached).
		return false
	}
	k := sha256.Sum256([]byte(token))
	ss.mu.Lock()
	c, ok := ss.cache[k]
	ss.mu.Unlock()
	if ok && c.gone {
		return false
	}
	if !ok || now.Sub(c.read) >= sessionFresh || now.Before(c.read) {
		if got, err := ss.read(k, now); err == nil {
			c, ok = got, true
		} else {
			ss.warn(now, err)
		}
	}
	if !ok || !c.found || !now.Before(c.exp) {
		return false
	}
	want := passwordTag(token, pw)
	return subtle.ConstantTimeCompare(c.tag[:], want[:]) == 1
}

// read fetches the row of k and caches the answer.
func (ss *sessions) read(k [32]byte, now time.Time) (cachedSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	row, found, err := ss.st.Session(ctx, hex.EncodeToString(k[:]))
	if err != nil {
		return cachedSession{}, err
	}
	c := cachedSession{found: found, exp: row.Expires, read: now}
	if found {
		if tag, err := hex.DecodeString(row.PasswordTag); err == nil && len(tag) == len(c.tag) {
			copy(c.tag[:], tag)
		} else {
			c.found = false // a row this code did not write: no session
		}
	}
	ss.put(k, c)
	return c, nil
}

// remove ends the session of token: here at once, on other instances when
// their cached answer is older than sessionFresh. A database error is
// logged; this instance still refuses the token from then on.
func (ss *sessions) remove(token string, now time.Time) {
	k := sha256.Sum256([]byte(token))
	ss.put(k, cachedSession{gone: true, read: now})
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	if err := ss.st.DeleteSession(ctx, hex.EncodeToString(k[:])); err != nil {
		ss.log.Warn("admin logout: could not delete the session from the database; other instances may accept it until it expires", "err", err)
	}
}

// warn logs a failed session read, at most once a minute: during an
// outage every admin call would log it.
func (ss *sessions) warn(now time.Time, err error) {
	ss.mu.Lock()
	due := now.Sub(ss.lastWarn) >= time.Minute || now.Before(ss.lastWarn)
	if due {
		ss.lastWarn = now
	}
	ss.mu.Unlock()
	if due {
		ss.log.Warn("admin sessions: database unreachable; sessions keep their last known state", "err", err)
	}
}

// put caches c, making room when the cache is full: first by dropping
// answers too old to be trusted, then everything (the next calls read the
// database again).
func (ss *sessions) put(k [32]byte, c cachedSession) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if _, ok := ss.cache[k]; !ok && len(ss.cache) >= maxCached {
		for key, old := range ss.cache {
			if !old.gone && c.read.Sub(old.read) >= sessionFresh {
				delete(ss.cache, key)
			}
		}
		if len(ss.cache) >= maxCached {
			clear(ss.cache)
		}
	}
	ss.cache[k] = c
}

// wellFormed reports whether token has the shape create gives one: 64
// lowercase hex digits.
func wellFormed(token string) bool {
	if len(token) != 64 {
		return false
	}
	for i := range len(token) {
		if c := token[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
