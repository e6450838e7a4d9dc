package engine

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
)

// Listener is ln with each TCP connection it accepts answering a one-byte
// read with one system call for everything that has arrived.
//
// With ReduceMemoryUsage (NewServer), fasthttp waits for a keep-alive
// connection's next request by reading one byte, so that an idle
// connection holds no read buffer, and then reads the rest of the request
// into a buffer: two reads of the socket per request where one would do.
// Here the one-byte read waits for the socket without a buffer, as
// fasthttp's does, and then reads what arrived into a pooled buffer that
// the next Read empties (perf: a system call was ~4% of a
// non-stream request's CPU).
//
// Each connection is also watched for its client hanging up (hangups), so
// that a request waiting on its upstream is cancelled at once.
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
	sock := newRawSock(tc)
	if sock == nil {
		return c, nil
	}
	ac := &aheadConn{Conn: tc, sock: sock}
	ac.readFn = ac.readSocket // bound once: a closure per read cost four allocations
	if l.hangups != nil {
		ac.hangups = l.hangups
		_ = sock.rc.Control(func(fd uintptr) { l.hangups.watch(ac, int(fd)) })
	}
	return ac, nil
}

// aheadConn is a TCP connection whose one-byte reads read ahead. It embeds
// net.Conn, not *net.TCPConn, so that nothing (io.Copy through WriteTo, say)
// reads the socket past the bytes read ahead.
type aheadConn struct {
	net.Conn
	sock  *rawSock // the socket's reads past those read ahead, and its writes
	ahead *[]byte  // bytes read ahead are (*ahead)[off:end]; nil when none
	off   int
	end   int

	// readFn (readSocket) is RawConn.Read's callback; it leaves what it
	// read in buf, n and err.
	readFn func(fd uintptr) bool
	buf    *[]byte
	n      int
	err    error

	// hangups watches the connection under hangupID; gone is set once the
	// client hung up, and waiting is the request to tell then (watchFor).
	hangups  *hangups
	hangupID uint64
	addrKey  connKey
	gone     atomic.Bool
	waiting  atomic.Pointer[request]
}

// watchFor makes r, until unwatch, the request told when the client hangs
// up; if it already has, r is told at once.
func (c *aheadConn) watchFor(r *request) {
	c.waiting.Store(r)
	if c.gone.Load() {
		r.leave()
	}
}

// unwatch ends watchFor(r).
func (c *aheadConn) unwatch(r *request) { c.waiting.CompareAndSwap(r, nil) }

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

// aheadSize is what one read takes in: fasthttp's read buffer, so a
// request that fits it arrives in one system call.
const aheadSize = 4 << 10

var aheadBufs = sync.Pool{New: func() any {
	b := make([]byte, aheadSize)
	return &b
}}

func (c *aheadConn) Read(p []byte) (int, error) {
	if c.ahead != nil {
		n := copy(p, (*c.ahead)[c.off:c.end])
		c.off += n
		if c.off == c.end {
			aheadBufs.Put(c.ahead)
			c.ahead = nil
		}
		return n, nil
	}
	if len(p) != 1 {
		return c.sock.Read(p)
	}
	return c.readAhead(p)
}

func (c *aheadConn) Write(p []byte) (int, error) { return c.sock.Write(p) }

// readAhead waits until the socket is readable, holding no buffer, then
// reads what is there into a pooled one and returns its first byte.
func (c *aheadConn) readAhead(p []byte) (int, error) {
	if err := c.sock.rc.Read(c.readFn); err != nil {
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
func (c *aheadConn) readSocket(fd uintptr) bool {
	c.buf = aheadBufs.Get().(*[]byte)
	for {
		c.n, c.err = sockRead(fd, *c.buf)
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

func (c *aheadConn) opError(err error) error {
	return &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
