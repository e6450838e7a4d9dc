// Package listen is the gateway's client-side listener: each accepted TCP
// connection is watched for its client hanging up, so that a request
// waiting on its upstream can be cancelled at once, and, on Linux, a
// one-byte read is answered with one system call for everything that has
// arrived. Its API is Listener for the server, Find to get a request's
// connection back from its address pair, and Conn's Watch and Unwatch.
//
// The platform parts sit behind build tags: listener_epoll.go and
// hangup_epoll.go (linux && !ccload_portable) watch every connection in
// one epoll set; listener_portable.go and hangup_portable.go (!linux ||
// ccload_portable) read an idle connection while a request waits.
package listen

import (
	"net"
	"sync"
)

// Listener is ln with each TCP connection it accepts (a *Conn) watched
// for its client hanging up (hangups), so that a request waiting on its
// upstream is cancelled at once, and, on Linux, answering a one-byte read
// with one system call for everything that has arrived (listener_epoll.go).
func Listener(ln net.Listener) net.Listener { return aheadListener{ln, processHangups()} }

type aheadListener struct {
	net.Listener
	hangups *hangups // nil: not watched
}

func (l aheadListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	if ac := newConn(tc, l.hangups); ac != nil {
		return ac, nil
	}
	return c, nil
}

// Find is the watched connection between local and remote (a request's
// ctx.LocalAddr and ctx.RemoteAddr), nil if there is none: it was not
// accepted by Listener, it closed, or the platform cannot watch
// connections. It looks the connection up by its addresses because the
// server may hand its handler the connection wrapped.
func Find(local, remote net.Addr) *Conn {
	h := processHangups()
	if h == nil {
		return nil
	}
	return h.conn(local, remote)
}

// A Waiter is what a connection tells when its client hangs up: the
// request waiting on it. HungUp may run on any goroutine, more than once.
type Waiter interface{ HungUp() }

// Watch makes w, until Unwatch(w), the waiter told when the client hangs
// up; if it already has, w is told at once. w is compared with == by
// Unwatch, so it is a pointer.
func (c *Conn) Watch(w Waiter) {
	c.wait.Lock()
	c.waiting = w
	gone := c.gone
	c.wait.Unlock()
	if gone {
		w.HungUp()
		return
	}
	c.startWatch()
}

// Unwatch ends Watch(w); it does nothing when another waiter has taken
// w's place since.
func (c *Conn) Unwatch(w Waiter) {
	c.wait.Lock()
	mine := c.waiting == w
	if mine {
		c.waiting = nil
	}
	c.wait.Unlock()
	if mine {
		c.stopWatch()
	}
}

// hungUp runs on the watcher's goroutine when the client closed or reset
// the connection.
func (c *Conn) hungUp() {
	c.wait.Lock()
	c.gone = true
	w := c.waiting
	c.wait.Unlock()
	if w != nil {
		w.HungUp()
	}
}

// waitState is the part of a Conn that Watch, Unwatch and hungUp share:
// gone is set once the client hung up, and waiting is the waiter to tell
// then. A mutex and not atomics: the waiter is an interface.
type waitState struct {
	wait    sync.Mutex
	gone    bool
	waiting Waiter
}

// Close takes c out of the registry, so that Find no longer gives it and
// a hang-up already collected for it finds nothing, then closes it.
func (c *Conn) Close() error {
	if c.hangups != nil {
		c.hangups.forget(c)
	}
	return c.Conn.Close()
}

// aheadSize is what one read ahead takes in: fasthttp's read buffer, so a
// request that fits it arrives in one system call.
const aheadSize = 4 << 10

var aheadBufs = sync.Pool{New: func() any {
	b := make([]byte, aheadSize)
	return &b
}}

// readBuffered hands out bytes read ahead, if any: n > 0 when it did.
func (c *Conn) readBuffered(p []byte) int {
	if c.ahead == nil {
		return 0
	}
	n := copy(p, (*c.ahead)[c.off:c.end])
	c.off += n
	if c.off == c.end {
		aheadBufs.Put(c.ahead)
		c.ahead = nil
	}
	return n
}
