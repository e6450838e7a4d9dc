//go:build !unix

package upstream

import (
	"errors"
	"net"
	"os"
	"time"
)

// idleCheckWait is how long the portable idle check waits for a byte: Go
// offers no non-blocking peek here, and a read whose deadline has passed
// returns without looking at the socket.
const idleCheckWait = time.Millisecond

// idleReceived is idle_unix.go's check without a peek: a read
// bounded by a short deadline. Anything it gets (bytes, EOF, a reset)
// condemns the connection, which is then closed, so consuming the byte
// loses nothing. It costs idleCheckWait per reused connection. deadline
// is the connection's read deadline, put back after the check.
func idleReceived(nc net.Conn, deadline time.Time) bool {
	if err := nc.SetReadDeadline(time.Now().Add(idleCheckWait)); err != nil {
		return true
	}
	var b [1]byte
	_, err := nc.Read(b[:])
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nc.SetReadDeadline(deadline) != nil
	}
	return true
}
