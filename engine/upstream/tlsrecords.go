package upstream

import (
	"crypto/tls"
	"errors"
	"net"
)

// A TLS connection's Read returns one record's plaintext at a time, even
// when the socket read that brought it also brought the records after it.
// An upstream streaming events writes one record per event, and a relay
// that flushes to its client before each read that may wait (BeforeWait)
// would then flush once per event where plain http flushes once per
// socket read: one write to the client per event, about half of ccload's
// CPU on a TLS stream. Measured with benchload -upstream https-h2 -only
// sse, one run each: flushes were 44% of ccload's CPU samples, 0.316
// CPU-ms per stream (0.68x nginx's streams/s); reading the buffered
// records first, 0.200 CPU-ms (0.87x).
//
// recordConn sits between tls.Conn and the TCP connection so that a read
// can be asked to take only what the TLS connection holds already:
// fillBuffered. With noWait set, a read of the TCP connection fails at
// once with errNoRecord instead of waiting, and crypto/tls keeps its state
// for the next Read (a net.Error that is Temporary is not sticky there).

// recordConn is the TCP connection under a tls.Conn.
type recordConn struct {
	net.Conn
	// noWait: set only by the goroutine reading the body, around a Read of
	// the tls.Conn above (which holds its input lock meanwhile).
	noWait bool
}

func (c *recordConn) Read(p []byte) (int, error) {
	if c.noWait {
		return 0, errNoRecord
	}
	return c.Conn.Read(p)
}

// errNoRecord is recordConn's "would wait".
var errNoRecord error = noRecordError{}

type noRecordError struct{}

func (noRecordError) Error() string   { return "upstream: no TLS record buffered" }
func (noRecordError) Timeout() bool   { return true }
func (noRecordError) Temporary() bool { return true }

// tlsClient is tls.Client over a recordConn.
func tlsClient(nc net.Conn, cfg *tls.Config) (*tls.Conn, *recordConn) {
	rc := &recordConn{Conn: nc}
	return tls.Client(rc, cfg), rc
}

// fillBuffered is fill from what the TLS connection holds already: the
// plaintext of records that arrived with an earlier socket read. It
// reports whether it read anything; on a plain connection it never does.
func (c *h1Conn) fillBuffered() (bool, error) {
	if c.rec == nil || !c.room() {
		return false, nil // no room: fill reports it
	}
	c.rec.noWait = true
	n, err := c.tc.Read(c.buf[c.w:])
	c.rec.noWait = false
	c.w += n
	if errors.Is(err, errNoRecord) {
		err = nil
	}
	return n > 0, err
}
