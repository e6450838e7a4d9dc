//go:build linux && !ccload_portable

package engine

import (
	"io"
	"net"
	"os"
	"syscall"
)

// rawSock reads and writes a TCP socket with system calls that do not tell
// the Go scheduler they may block (sockRead, sockWrite: RawSyscall outside
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
type rawSock struct {
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

// newRawSock is c's rawSock, nil when c is not a TCP socket with a
// RawConn (the caller then uses c itself).
func newRawSock(c net.Conn) *rawSock {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	s := &rawSock{conn: c, rc: rc}
	s.readFn = s.readSocket
	s.writeFn = s.writeSocket
	s.peekFn = s.peekSocket
	return s
}

// received is idleReceived on the socket's own RawConn with a callback
// bound once: the check runs before every reuse of a pooled connection,
// and idleReceived's SyscallConn and closure were allocations per request.
func (s *rawSock) received() bool {
	s.peeked = false
	err := s.rc.Read(s.peekFn)
	return err != nil || s.peeked
}

// peekSocket is idleReceived's peek: MSG_PEEK consumes nothing, and
// EAGAIN (nothing there) leaves the connection as the answer left it.
func (s *rawSock) peekSocket(fd uintptr) bool {
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
func (s *rawSock) Read(p []byte) (int, error) {
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

func (s *rawSock) readSocket(fd uintptr) bool {
	for {
		n, err := sockRead(fd, s.rbuf)
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
func (s *rawSock) Write(p []byte) (int, error) {
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

func (s *rawSock) writeSocket(fd uintptr) bool {
	for s.wn < len(s.wbuf) {
		n, err := sockWrite(fd, s.wbuf[s.wn:])
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
func (s *rawSock) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		oe.Op = op
		return oe
	}
	return &net.OpError{Op: op, Net: "tcp", Source: s.conn.LocalAddr(), Addr: s.conn.RemoteAddr(), Err: err}
}
