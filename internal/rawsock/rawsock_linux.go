//go:build linux && !ccload_portable

// Package rawsock reads and writes TCP sockets on Linux with system calls
// that do not enter the Go scheduler's system-call state. The gateway's
// listener and its HTTP/1.1 upstream client both use it; elsewhere (other
// systems, the ccload_portable build tag) New gives nil and they use the
// net.Conn itself.
package rawsock

import (
	"io"
	"net"
	"os"
	"syscall"
)

// Conn reads and writes a TCP socket with system calls that do not tell
// the Go scheduler they may block (ReadFD, WriteFD: RawSyscall outside
// the race detector). The socket is non-blocking, so they never do: a read
// with nothing to read or a write into a full buffer returns EAGAIN, and
// RawConn then waits in the netpoller as net.Conn does.
//
// Why (perf): a write on loopback runs the receiver's TCP input
// too and can take 20–50 µs. Through net.Conn it is a blocking system
// call, so the runtime's monitor thread (sysmon) finds the P in a system
// call, hands it to another thread, and, having found work, keeps waking
// every 20 µs instead of backing off to 10 ms. perf put that monitor at
// 5.7% of the gateway's CPU in the non-stream load benchmark, its sleeps
// alone 4.5%, with the hand-offs' thread wake-ups on top.
//
// Deadlines, closing and the netpoller's waiting are RawConn's, so they
// behave as net.Conn's do; errors are the *net.OpError net.Conn returns.
type Conn struct {
	conn net.Conn // the socket's net.Conn, for its addresses in errors
	rc   syscall.RawConn

	// Each direction has its own callback, bound once (a closure per call
	// allocates), and its own arguments and results, so that one read and
	// one write may run at once as on a net.Conn.
	readFn, writeFn func(fd uintptr) bool
	peekFn          func(fd uintptr) bool
	peeked          bool // what peekSocket found
	peekBuf         [1]byte
	rbuf            []byte
	rn              int
	rerr            error
	wbuf            []byte
	wn              int
	werr            error
}

// New is c's Conn, nil when c is not a TCP socket with a RawConn (the
// caller then uses c itself).
func New(c net.Conn) *Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	s := &Conn{conn: c, rc: rc}
	s.readFn = s.readSocket
	s.writeFn = s.writeSocket
	s.peekFn = s.peekSocket
	return s
}

// Control runs f with the socket's descriptor (RawConn.Control).
func (s *Conn) Control(f func(fd uintptr)) error { return s.rc.Control(f) }

// WaitRead waits until the socket is readable and f reports true
// (RawConn.Read): f reads with ReadFD and returns false on EAGAIN.
func (s *Conn) WaitRead(f func(fd uintptr) bool) error { return s.rc.Read(f) }

// Received reports whether bytes or the peer's close (FIN or reset) are
// waiting on the socket: a peek that never waits and consumes nothing.
// The upstream client checks an idle pooled connection with it before
// every reuse, so its callback is bound once (SyscallConn and a closure
// per check were allocations per request).
func (s *Conn) Received() bool {
	s.peeked = false
	err := s.rc.Read(s.peekFn)
	return err != nil || s.peeked
}

// peekSocket is Received's peek: MSG_PEEK consumes nothing, and EAGAIN
// (nothing there) leaves the socket as it was.
func (s *Conn) peekSocket(fd uintptr) bool {
	for {
		_, _, err := syscall.Recvfrom(int(fd), s.peekBuf[:], syscall.MSG_PEEK)
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
		default:
			s.peeked = true // a byte (n > 0), the peer's FIN (n == 0), or an error
		}
		return true
	}
}

// Read is net.Conn's Read.
func (s *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.rbuf, s.rn, s.rerr = p, 0, nil
	err := s.rc.Read(s.readFn)
	n, rerr := s.rn, s.rerr
	s.rbuf, s.rerr = nil, nil
	switch {
	case err != nil:
		return 0, s.opError("read", err)
	case rerr != nil:
		return 0, s.opError("read", os.NewSyscallError("read", rerr))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (s *Conn) readSocket(fd uintptr) bool {
	for {
		n, err := ReadFD(fd, s.rbuf)
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case nil:
			s.rn = n
		default:
			s.rerr = err
		}
		return true
	}
}

// Write is net.Conn's Write: all of p, or an error.
func (s *Conn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.wbuf, s.wn, s.werr = p, 0, nil
	err := s.rc.Write(s.writeFn)
	n, werr := s.wn, s.werr
	s.wbuf, s.werr = nil, nil
	switch {
	case err != nil:
		return n, s.opError("write", err)
	case werr != nil:
		return n, s.opError("write", os.NewSyscallError("write", werr))
	}
	return n, nil
}

func (s *Conn) writeSocket(fd uintptr) bool {
	for s.wn < len(s.wbuf) {
		n, err := WriteFD(fd, s.wbuf[s.wn:])
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case nil:
			s.wn += n
		default:
			s.werr = err
			return true
		}
	}
	return true
}

// opError is err as net.Conn reports it. RawConn's own errors (a deadline,
// a closed connection) already are *net.OpErrors, named "raw-read" and
// "raw-write"; they get net.Conn's operation names.
func (s *Conn) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		oe.Op = op
		return oe
	}
	return &net.OpError{Op: op, Net: "tcp", Source: s.conn.LocalAddr(), Addr: s.conn.RemoteAddr(), Err: err}
}
