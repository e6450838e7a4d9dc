//go:build !linux || ccload_portable

package listen

import (
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// Conn is a TCP connection that, while a request waits on its
// upstream, reads itself to notice its client hanging up: this is the
// portable form of the Linux epoll watcher (listener_epoll.go), used on
// macOS and Windows and, under the ccload_portable build tag, on Linux
// so that its tests run here.
//
// fasthttp reads a connection only between requests (the whole request
// body is in before the handler runs), so from Watch to Unwatch the
// connection is the watcher's to read. A read that ends in EOF or a reset
// is the client gone; bytes that arrive (a pipelined request) are kept
// for fasthttp's next Read and end the watch, since a client that sends
// is still there. Unwatch, and any Read, stop the watching read by
// moving the read deadline into the past, wait for it, and put back the
// deadline fasthttp last set. It costs a goroutine per waiting request,
// and nothing on an idle connection.
type Conn struct {
	net.Conn
	ahead *[]byte // bytes read ahead are (*ahead)[off:end]; nil when none
	off   int
	end   int

	// wmu orders starting and stopping the watching read with deadline
	// changes; watchDone is closed when the watching read has returned
	// (nil: none running); readDeadline is the read deadline last set from
	// outside, restored when the watch ends.
	wmu          sync.Mutex
	watchDone    chan struct{}
	readDeadline time.Time

	// hangups files the connection under hangupID, and waitState tells the
	// waiter (Watch) when its client hangs up.
	hangups  *hangups
	hangupID uint64
	addrKey  connKey
	waitState
}

// newConn is tc filed in h (nil: not watched).
func newConn(tc *net.TCPConn, h *hangups) *Conn {
	ac := &Conn{Conn: tc}
	if h != nil {
		h.register(ac)
	}
	return ac
}

// startWatch starts the watching read unless one runs, bytes are already
// waiting (the client is sending) or the connection is not filed.
func (c *Conn) startWatch() {
	if c.hangups == nil {
		return
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.watchDone != nil || c.ahead != nil {
		return
	}
	done := make(chan struct{})
	c.watchDone = done
	go c.watch(done)
}

// watch is the watching read. Only it touches ahead until done is closed;
// stopWatch waits for that before anyone reads ahead.
func (c *Conn) watch(done chan struct{}) {
	defer close(done)
	buf := aheadBufs.Get().(*[]byte)
	n, err := c.Conn.Read(*buf)
	if n > 0 {
		c.ahead, c.off, c.end = buf, 0, n
		return
	}
	aheadBufs.Put(buf)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, net.ErrClosed) {
		c.hungUp() // EOF (a FIN, half-close included) or a reset
	}
}

// stopWatch ends the watching read, if one runs, and restores the read
// deadline set from outside.
func (c *Conn) stopWatch() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.watchDone == nil {
		return
	}
	_ = c.Conn.SetReadDeadline(time.Unix(1, 0))
	<-c.watchDone
	c.watchDone = nil
	_ = c.Conn.SetReadDeadline(c.readDeadline)
}

func (c *Conn) Read(p []byte) (int, error) {
	c.stopWatch()
	if n := c.readBuffered(p); n > 0 {
		return n, nil
	}
	return c.Conn.Read(p)
}

func (c *Conn) SetReadDeadline(t time.Time) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.readDeadline = t
	return c.Conn.SetReadDeadline(t)
}

func (c *Conn) SetDeadline(t time.Time) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.readDeadline = t
	return c.Conn.SetDeadline(t)
}
