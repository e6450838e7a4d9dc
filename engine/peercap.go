package engine

import (
	"net"
	"net/netip"
	"sync"

	"github.com/valyala/fasthttp"
)

// peerCap is server.max_conns_per_ip: how many connections one peer
// address may hold. It replaces fasthttp's MaxConnsPerIP, which counts
// every peer alike: behind a load balancer every client arrives from the
// balancer's address, so the cap refused the 257th stream of everyone. A
// peer in server.trusted_proxies is not counted; its clients are told
// apart by X-Forwarded-For, and are bounded by server.max_conns and their
// tokens' limits.
//
// It counts from fasthttp's ConnState: a connection counts from StateNew
// until it closes or is hijacked (a WebSocket, which has its own caps in
// server.websockets). The limit and the trusted proxies are read from the
// serving config at each accept, so they follow reloads.
type peerCap struct {
	e       *Engine
	mu      sync.Mutex
	open    map[netip.Addr]int
	counted map[net.Conn]netip.Addr
}

func newPeerCap(e *Engine) *peerCap {
	return &peerCap{e: e, open: map[netip.Addr]int{}, counted: map[net.Conn]netip.Addr{}}
}

// tooMany is written to a connection over the cap, before it is closed.
const tooMany = "HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 64\r\n\r\n" +
	"too many connections from this address (server.max_conns_per_ip)"

// connState is the server's ConnState hook.
func (p *peerCap) connState(c net.Conn, st fasthttp.ConnState) {
	switch st {
	case fasthttp.StateNew:
		p.admit(c)
	case fasthttp.StateClosed, fasthttp.StateHijacked:
		p.mu.Lock()
		if a, ok := p.counted[c]; ok {
			delete(p.counted, c)
			if p.open[a]--; p.open[a] <= 0 {
				delete(p.open, a)
			}
		}
		p.mu.Unlock()
	}
}

// admit counts a new connection, or refuses it (429, then closed) when
// its peer already holds the cap.
func (p *peerCap) admit(c net.Conn) {
	srv := &p.e.cfg.Current().Server
	limit := srv.Limits.MaxConnsPerIP
	a, ok := connAddr(c)
	if limit <= 0 || !ok || srv.Trusts(a) {
		return
	}
	p.mu.Lock()
	over := p.open[a] >= limit
	if !over {
		p.open[a]++
		p.counted[c] = a
	}
	p.mu.Unlock()
	if over {
		// The write goes to a fresh socket's empty buffer, so it does not
		// hold up the accept loop this runs on; fasthttp then finds the
		// connection closed and ends it.
		c.Write([]byte(tooMany))
		c.Close()
	}
}

// connAddr is a connection's peer address.
func connAddr(c net.Conn) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}
