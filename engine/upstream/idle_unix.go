//go:build unix

package upstream

import (
	"net"
	"syscall"
	"time"
)

// idleReceived reports whether an idle pooled connection received bytes
// or its close (FIN or reset) since its last answer: a peek at the socket
// that never waits (Go's sockets are non-blocking) and consumes nothing.
// Such a connection must not carry the next request. What arrived belongs
// to no request of ours: a 408 some front ends (Google's) send before
// closing an idle connection, a stray CRLF; read as the next answer it
// would fail that request and cool its URL. net/http drops these too.
// The peek leaves the read deadline alone.
func idleReceived(nc net.Conn, _ time.Time) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	var b [1]byte
	got := false
	err = rc.Read(func(fd uintptr) bool {
		for {
			_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK)
			switch err {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				// Nothing there: the connection is as the answer left it.
			default:
				got = true // a byte (n > 0), the peer's FIN (n == 0), or an error
			}
			return true
		}
	})
	return err != nil || got
}
