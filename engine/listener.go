package engine

import (
	"net"
	"sync"
)

// Listener is ln with each TCP connection it accepts watched for its
// client hanging up (hangups), so that a request waiting on its upstream
// is cancelled at once, and, on Linux, answering a one-byte read with one
// system call for everything that has arrived (listener_epoll.go).
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
	if ac := newAheadConn(tc, l.hangups); ac != nil {
		return ac, nil
	}
	return c, nil
}

// watchFor makes r, until unwatch, the request told when the client hangs
// up; if it already has, r is told at once.
func (c *aheadConn) watchFor(r *request) {
	c.waiting.Store(r)
	if c.gone.Load() {
		r.leave()
		return
	}
	c.startWatch()
}

// unwatch ends watchFor(r).
func (c *aheadConn) unwatch(r *request) {
	if c.waiting.CompareAndSwap(r, nil) {
		c.stopWatch()
	}
}

// hungUp runs on the watcher's goroutine when the client closed or reset
// the connection.
func (c *aheadConn) hungUp() {
	c.gone.Store(true)
	if r := c.waiting.Load(); r != nil {
		r.leave()
	}
}

func (c *aheadConn) Close() error {
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
func (c *aheadConn) readBuffered(p []byte) int {
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
