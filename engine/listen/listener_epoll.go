//go:build linux && !ccload_portable

package listen

import (
	"io"
	"net"
	"os"
	"syscall"

	"github.com/ccload/ccload/internal/rawsock"
)

// Conn is a TCP connection whose one-byte reads read ahead, watched
// by the process's epoll set for its client hanging up. It embeds
// net.Conn, not *net.TCPConn, so that nothing (io.Copy through WriteTo,
// say) reads the socket past the bytes read ahead.
//
// With ReduceMemoryUsage (NewServer), fasthttp waits for a keep-alive
// connection's next request by reading one byte, so that an idle
// connection holds no read buffer, and then reads the rest of the request
// into a buffer: two reads of the socket per request where one would do.
// Here the one-byte read waits for the socket without a buffer, as
// fasthttp's does, and then reads what arrived into a pooled buffer that
// the next Read empties (perf: a system call was ~4% of a non-stream
// request's CPU).
type Conn struct {
	net.Conn
	sock  *rawsock.Conn // the socket's reads past those read ahead, and its writes
	ahead *[]byte       // bytes read ahead are (*ahead)[off:end]; nil when none
	off   int
	end   int

	// readFn (readSocket) is RawConn.Read's callback; it leaves what it
	// read in buf, n and err.
	readFn func(fd uintptr) bool
	buf    *[]byte
	n      int
	err    error

	// hangups watches the connection under hangupID, and waitState tells
	// the waiter (Watch) when its client hangs up.
	hangups  *hangups
	hangupID uint64
	addrKey  connKey
	waitState
}

// newConn is tc read ahead and watched by h (nil: not watched); nil when
// tc has no RawConn (the listener then hands out tc itself).
func newConn(tc *net.TCPConn, h *hangups) *Conn {
	sock := rawsock.New(tc)
	if sock == nil {
		return nil
	}
	ac := &Conn{Conn: tc, sock: sock}
	ac.readFn = ac.readSocket // bound once: a closure per read cost four allocations
	if h != nil {
		_ = sock.Control(func(fd uintptr) { h.watch(ac, int(fd)) })
	}
	return ac
}

// startWatch and stopWatch have nothing to do: the epoll set watches the
// connection from its accept to its close.
func (c *Conn) startWatch() {}
func (c *Conn) stopWatch()  {}

func (c *Conn) Read(p []byte) (int, error) {
	if n := c.readBuffered(p); n > 0 {
		return n, nil
	}
	if len(p) != 1 {
		return c.sock.Read(p)
	}
	return c.readAhead(p)
}

func (c *Conn) Write(p []byte) (int, error) { return c.sock.Write(p) }

// readAhead waits until the socket is readable, holding no buffer, then
// reads what is there into a pooled one and returns its first byte.
func (c *Conn) readAhead(p []byte) (int, error) {
	if err := c.sock.WaitRead(c.readFn); err != nil {
		return 0, err // a deadline, or the connection closed (a *net.OpError)
	}
	buf, n, rerr := c.buf, c.n, c.err
	c.buf, c.err = nil, nil
	switch {
	case rerr != nil:
		aheadBufs.Put(buf)
		return 0, c.opError(os.NewSyscallError("read", rerr))
	case n == 0:
		aheadBufs.Put(buf)
		return 0, io.EOF
	}
	p[0] = (*buf)[0]
	if n == 1 {
		aheadBufs.Put(buf)
	} else {
		c.ahead, c.off, c.end = buf, 1, n
	}
	return 1, nil
}

// readSocket reads the socket once into a pooled buffer; on EAGAIN it
// gives the buffer back and reports false, and RawConn.Read waits for the
// socket as net.Conn's Read does.
func (c *Conn) readSocket(fd uintptr) bool {
	c.buf = aheadBufs.Get().(*[]byte)
	for {
		c.n, c.err = rawsock.ReadFD(fd, *c.buf)
		if c.err != syscall.EINTR {
			break
		}
	}
	if c.err == syscall.EAGAIN {
		aheadBufs.Put(c.buf)
		c.buf = nil
		return false
	}
	return true
}

func (c *Conn) opError(err error) error {
	return &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
