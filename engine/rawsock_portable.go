//go:build !linux || ccload_portable

package engine

import (
	"net"
	"time"
)

// rawSock is Linux's way round the scheduler's system-call hand-offs
// (rawsock_linux.go). Elsewhere there is none: newRawSock is nil and its
// callers read and write the net.Conn itself.
type rawSock struct{ net.Conn }

func newRawSock(net.Conn) *rawSock { return nil }

// received is never called: newRawSock gives no rawSock here, and the h1
// client checks an idle connection with idleReceived.
func (s *rawSock) received() bool { return idleReceived(s.Conn, time.Time{}) }
