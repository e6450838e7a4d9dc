//go:build !linux || ccload_portable

// Package rawsock reads and writes TCP sockets on Linux with system calls
// that do not enter the Go scheduler's system-call state
// (rawsock_linux.go). Elsewhere, and under the ccload_portable build tag,
// there is no such way: New gives nil and callers read and write the
// net.Conn itself, which is the portable path and a complete one.
package rawsock

import "net"

// Conn is never made here (New gives nil); its methods exist so that
// callers compile the same on every system.
type Conn struct{ net.Conn }

// New is nil: callers use the net.Conn.
func New(net.Conn) *Conn { return nil }

// Received is never called (New gives no Conn); were it, a connection
// would count as having received something, and a pool would drop it.
func (s *Conn) Received() bool { return true }
