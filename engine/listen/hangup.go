package listen

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
)

// hangups tells a request (a Waiter) that its client closed the
// connection while the request waits on its upstream, so the upstream
// request is cancelled then and not at the first write of an answer
// nobody reads. fasthttp reads a connection only between requests and
// reports nothing while its handler runs; a coding agent that gives up on
// a long answer (the user pressed Esc) would otherwise keep a reasoning
// model generating, and billing, until its first output or a timeout. A
// client that half-closes after sending its request counts as gone, as it
// does for nginx.
//
// How a hang-up is noticed is the platform's (hangup_epoll.go: one epoll
// set for every connection on Linux; hangup_portable.go: a read of the
// idle connection while a request waits, everywhere else and under the
// ccload_portable build tag). What is shared is the registry: every
// accepted connection under an ID, and found again by its address pair.
type hangups struct {
	watcher hangupWatcher // the platform's; its zero value watches nothing
	nextID  atomic.Uint64

	mu    sync.Mutex
	conns map[uint64]*Conn
	// byAddr finds a request's connection by its address pair (Find):
	// fasthttp may hand the handler the connection wrapped
	// (server.max_conns_per_ip).
	byAddr sync.Map // connKey -> *Conn
}

// processHangups is the one registry of the process, made by the first
// Listener; nil when the platform cannot watch connections (the gateway
// then works as before: a disconnect is seen at the next write).
var processHangups = sync.OnceValue(newHangups)

// register files c, which must be open, under a new ID.
func (h *hangups) register(c *Conn) {
	id := h.nextID.Add(1)
	c.hangups = h
	c.hangupID = id
	h.mu.Lock()
	h.conns[id] = c
	h.mu.Unlock()
	if key, ok := keyOf(c.LocalAddr(), c.RemoteAddr()); ok {
		c.addrKey = key
		h.byAddr.Store(key, c)
	}
}

// forget drops c before its socket closes. The ID is never reused, so a
// hang-up already collected for c finds nothing.
func (h *hangups) forget(c *Conn) {
	h.mu.Lock()
	delete(h.conns, c.hangupID)
	h.mu.Unlock()
	h.byAddr.CompareAndDelete(c.addrKey, c)
}

// hungUp tells the connection filed under id, if still there, that its
// client left.
func (h *hangups) hungUp(id uint64) {
	h.mu.Lock()
	c := h.conns[id]
	h.mu.Unlock()
	if c != nil {
		c.hungUp()
	}
}

// conn is the watched connection between local and remote, nil if none.
func (h *hangups) conn(local, remote net.Addr) *Conn {
	key, ok := keyOf(local, remote)
	if !ok {
		return nil
	}
	if c, ok := h.byAddr.Load(key); ok {
		return c.(*Conn)
	}
	return nil
}

// connKey names a TCP connection by its address pair.
type connKey struct{ local, remote netip.AddrPort }

func keyOf(local, remote net.Addr) (connKey, bool) {
	l, ok1 := local.(*net.TCPAddr)
	r, ok2 := remote.(*net.TCPAddr)
	if !ok1 || !ok2 {
		return connKey{}, false
	}
	return connKey{l.AddrPort(), r.AddrPort()}, true
}
