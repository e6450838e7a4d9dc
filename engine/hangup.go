package engine

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
)

// hangups tells a request that its client closed the connection while
// the request waits on its upstream, so the upstream request is cancelled
// then and not at the first write of an answer nobody reads. fasthttp
// reads a connection only between requests and reports nothing while its
// handler runs; a coding agent that gives up on a long answer (the user
// pressed Esc) would otherwise keep a reasoning model generating, and
// billing, until its first output or a timeout.
//
// One epoll instance watches every accepted connection for the peer's
// FIN or reset only (EPOLLRDHUP, edge-triggered, no EPOLLIN): data
// arriving wakes nothing, and a connection costs one epoll_ctl when it is
// accepted and nothing per request. One goroutine waits on it. A client
// that half-closes after sending its request counts as gone, as it does
// for nginx.
type hangups struct {
	epfd   int
	nextID atomic.Uint64

	mu    sync.Mutex
	conns map[uint64]*aheadConn
	// byAddr finds a request's connection by its address pair: fasthttp
	// may hand the handler the connection wrapped (server.max_conns_per_ip).
	byAddr sync.Map // connKey -> *aheadConn
}

// hangupEvents is what the watcher waits for on a connection.
const hangupEvents = syscall.EPOLLRDHUP | syscall.EPOLLHUP | syscall.EPOLLERR | -syscall.EPOLLET

// processHangups is the one watcher of the process, started by the first
// Listener; nil when the system has no epoll (the gateway then works as
// before: a disconnect is seen at the next write).
var processHangups = sync.OnceValue(newHangups)

func newHangups() *hangups {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	h := &hangups{epfd: epfd, conns: map[uint64]*aheadConn{}}
	go h.run()
	return h
}

// watch registers c, which must be open, under a new ID.
func (h *hangups) watch(c *aheadConn, fd int) {
	id := h.nextID.Add(1)
	c.hangupID = id
	h.mu.Lock()
	h.conns[id] = c
	h.mu.Unlock()
	if key, ok := keyOf(c.LocalAddr(), c.RemoteAddr()); ok {
		c.addrKey = key
		h.byAddr.Store(key, c)
	}
	ev := syscall.EpollEvent{Events: uint32(hangupEvents), Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
	if syscall.EpollCtl(h.epfd, syscall.EPOLL_CTL_ADD, fd, &ev) != nil {
		h.forget(c)
	}
}

// forget drops c before its socket closes (closing also takes it out of
// the epoll set). The ID is never reused, so an event already collected
// for c finds nothing.
func (h *hangups) forget(c *aheadConn) {
	h.mu.Lock()
	delete(h.conns, c.hangupID)
	h.mu.Unlock()
	h.byAddr.CompareAndDelete(c.addrKey, c)
}

// conn is the watched connection between local and remote, nil if none.
func (h *hangups) conn(local, remote net.Addr) *aheadConn {
	key, ok := keyOf(local, remote)
	if !ok {
		return nil
	}
	if c, ok := h.byAddr.Load(key); ok {
		return c.(*aheadConn)
	}
	return nil
}

func (h *hangups) run() {
	var events [64]syscall.EpollEvent
	for {
		n, err := syscall.EpollWait(h.epfd, events[:], -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range events[:n] {
			id := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			h.mu.Lock()
			c := h.conns[id]
			h.mu.Unlock()
			if c != nil {
				c.hungUp()
			}
		}
	}
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
