package mockupstream

import (
	"net"
	"net/http"
	"sync"
)

// conns follows a started server's connections (http.Server.ConnState),
// so that a test can act on the idle ones as an upstream's own timers
// would.
type conns struct {
	mu       sync.Mutex
	idle     map[net.Conn]bool // every open connection: true while idle between requests
	accepted int
}

func (c *conns) track(nc net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle == nil {
		c.idle = map[net.Conn]bool{}
	}
	switch st {
	case http.StateNew:
		c.accepted++
		c.idle[nc] = false
	case http.StateActive:
		c.idle[nc] = false
	case http.StateIdle:
		c.idle[nc] = true
	case http.StateHijacked, http.StateClosed:
		delete(c.idle, nc)
	}
}

// Connections is how many connections the server accepted since Start.
func (s *Server) Connections() int {
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	return s.conns.accepted
}

// CloseIdle closes every connection that is idle between requests, as an
// upstream does when its keep-alive timeout passes, and returns how many
// it closed. last, when not nil, is written on each first: some front
// ends (Google's) send "HTTP/1.1 408 Request Time-out" before closing. A
// client must not take either for the answer to its next request. Over
// TLS, last goes out as application data and the close sends close_notify.
// It is meant for HTTP/1.1 connections: bytes written on an h2 one break
// its framing.
func (s *Server) CloseIdle(last []byte) int {
	s.conns.mu.Lock()
	var idle []net.Conn
	for nc, ok := range s.conns.idle {
		if ok {
			idle = append(idle, nc)
			delete(s.conns.idle, nc)
		}
	}
	s.conns.mu.Unlock()
	for _, nc := range idle {
		if last != nil {
			_, _ = nc.Write(last) // best effort: the connection closes either way
		}
		_ = nc.Close()
	}
	return len(idle)
}
