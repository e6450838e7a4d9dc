package upstream

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccload/ccload/internal/rawsock"
)

// h1Bufs are connections' read buffers, held while an answer is read.
var h1Bufs = sync.Pool{New: func() any { b := make([]byte, h1BufSize); return &b }}

// h1Conn is one connection to an upstream.
type h1Conn struct {
	nc net.Conn // the TCP connection: closing it interrupts a wait
	// tc is the TLS connection over nc for an https:// target, which
	// reads and writes go through; nil for plain http.
	tc   *tls.Conn
	rec  *recordConn   // between tc and nc (fillBuffered); nil for plain http
	sock *rawsock.Conn // nil when nc is not a TCP socket; with tc only its idle check
	addr string

	// buf[r:w] is read and not yet used; buf is nil while idle. bufp is
	// what h1Bufs gave, to give back.
	buf  []byte
	bufp *[]byte
	r, w int

	deadline time.Time // the read and write deadline set now
	idleAt   time.Time
	answered bool // a byte of an answer to this request arrived (it is not stale)
	// headWait is 1 while an attempt that can be interrupted waits for
	// the answer headers, 2 once interruptHead closed the connection.
	headWait   atomic.Int32
	closeAfter bool // the upstream closes it after this answer
	private    bool // an attempt's own (rq.Watch): never pooled
}

func (c *h1Conn) close() { c.nc.Close() }

// idleUsable reports whether an idle connection may carry a request: it
// received nothing, not even its close, while idle (idleReceived). A
// read deadline already past would fail the check's read before it looks
// at the socket, so it is cleared first; this happens only after a
// connection idled past its last deadline.
func (c *h1Conn) idleUsable() bool {
	if !c.deadline.IsZero() && !time.Now().Before(c.deadline) {
		if c.setDeadline(time.Time{}) != nil {
			return false
		}
	}
	if c.sock != nil {
		return !c.sock.Received()
	}
	return !idleReceived(c.nc, c.deadline)
}

// HeaderWait is where an attempt's HTTP/1.1 connection waits for the
// answer headers. The client reads them under a deadline and does not
// watch the attempt's context meanwhile (no goroutine or hook per
// request); a client that hangs up is told to the connection here instead.
type HeaderWait struct{ conn atomic.Pointer[h1Conn] }

// Interrupt closes the connection waiting for the answer headers, if one
// is: the attempt's client left. The attempt then fails with its
// context's cause, which the caller has set, and the upstream sees the
// request dropped instead of answering it to nobody. It may run on any
// goroutine.
func (w *HeaderWait) Interrupt() {
	if c := w.conn.Load(); c != nil {
		c.interruptHead()
	}
}

// interruptHead closes the connection if an attempt is waiting on it for
// the answer headers (HeaderWait.Interrupt).
func (c *h1Conn) interruptHead() {
	if c.headWait.CompareAndSwap(1, 2) {
		c.close()
	}
}

func (c *h1Conn) readSock(p []byte) (int, error) {
	if c.tc != nil {
		return c.tc.Read(p)
	}
	if c.sock != nil {
		return c.sock.Read(p)
	}
	return c.nc.Read(p)
}

func (c *h1Conn) write(p []byte) error {
	var err error
	if c.tc != nil {
		_, err = c.tc.Write(p)
	} else if c.sock != nil {
		_, err = c.sock.Write(p)
	} else {
		_, err = c.nc.Write(p)
	}
	return err
}

// setDeadline bounds reads and writes by t (zero: none). The deadline set
// may be later than t by up to a 32nd of the time left (9 ms on a 300 ms
// first_byte, 1.9 s on a minute): one set for a request then covers the
// requests that follow on the connection for that long, each of which
// would otherwise update the runtime's timer (perf).
func (c *h1Conn) setDeadline(t time.Time) error {
	if t.IsZero() {
		if c.deadline.IsZero() {
			return nil
		}
		c.deadline = t
		return c.nc.SetDeadline(t)
	}
	if slack := time.Until(t) / 32; slack > 0 {
		if !c.deadline.IsZero() && !c.deadline.Before(t) && c.deadline.Sub(t) <= slack {
			return nil
		}
		t = t.Add(slack)
	}
	c.deadline = t
	return c.nc.SetDeadline(t)
}

// room makes room at the end of buf for a read, moving what is unread to
// its start; false when buf is full of unread bytes.
func (c *h1Conn) room() bool {
	if c.r == c.w {
		c.r, c.w = 0, 0
	} else if c.w == len(c.buf) && c.r > 0 {
		c.w = copy(c.buf, c.buf[c.r:c.w])
		c.r = 0
	}
	return c.w < len(c.buf)
}

// fill reads from the socket into buf, after making room. It returns
// io.EOF only when the upstream closed the connection.
func (c *h1Conn) fill() error {
	if !c.room() {
		return errors.New("upstream answer: line too long")
	}
	n, err := c.readSock(c.buf[c.w:])
	c.w += n
	if n > 0 {
		c.answered = true
	}
	return err
}

// roundTrip writes req and reads the answer's headers.
func (c *h1Conn) roundTrip(u *h1Client, rq *Request, req *h1Req) (*Response, error) {
	c.answered = false
	if err := c.setDeadline(rq.HeaderBy); err != nil {
		return nil, err
	}
	if err := c.write(req.buf); err != nil {
		return nil, err
	}
	if len(req.body) > 0 {
		if err := c.write(req.body); err != nil {
			return nil, err
		}
	}
	if rq.Watch {
		arm(rq.Timers) // the connection is closed when ctx ends
	}
	if c.bufp == nil {
		c.bufp = h1Bufs.Get().(*[]byte)
		c.buf = *c.bufp
	}
	wait := rq.HeaderWait
	if c.private {
		wait = nil // closed with ctx already
	}
	if wait != nil {
		c.headWait.Store(1)
		wait.conn.Store(c)
		if rq.Ctx.Err() != nil { // the client left before the Store
			c.interruptHead()
		}
	}
	h, status, err := c.readHead()
	if wait != nil {
		wait.conn.Store(nil)
		if !c.headWait.CompareAndSwap(1, 0) {
			// A hang-up closed the connection, perhaps once the headers
			// were in: it must not go back to the pool.
			return nil, net.ErrClosed
		}
	}
	if err != nil {
		return nil, err
	}
	b := &h1Body{u: u, c: c, ctx: rq.Ctx, timers: rq.Timers, size: -2}
	switch {
	case status == 204 || status == 304:
		b.size = 0
	case h.chunked:
		b.size, b.chunked = -1, true
	case h.length >= 0:
		b.size = h.length
	default:
		c.closeAfter = true // the body ends when the connection does
	}
	b.left = b.size
	if b.size >= 0 && c.w-c.r >= b.size {
		// The body came whole with the headers: nothing to interrupt or
		// wait for, and the connection goes back at once.
		b.whole = bytes.Clone(c.buf[c.r : c.r+b.size])
		if b.whole == nil {
			b.whole = []byte{}
		}
		c.r += b.size
		b.c, b.released = nil, true
		u.put(c)
	} else if c.private {
		b.armed = true // timers armed above; the connection closes with ctx
	} else {
		b.liftDeadline = !rq.HeaderBy.IsZero()
	}
	return &Response{StatusCode: status, Header: h, Body: b, Ctx: rq.Ctx}, nil
}

// readHead reads the status line and headers of the answer, skipping
// interim (1xx) answers.
func (c *h1Conn) readHead() (*Header, int, error) {
	for {
		end, err := c.headEnd()
		if err != nil {
			return nil, 0, err
		}
		h, status, err := ParseHead(c.buf[c.r:end])
		if err != nil {
			c.closeAfter = true
			return nil, 0, err
		}
		c.r = end
		if status >= 200 || status == 101 {
			if status == 101 {
				return nil, 0, errors.New("upstream answer: unexpected 101 Switching Protocols")
			}
			c.closeAfter = c.closeAfter || h.close
			return h, status, nil
		}
	}
}

// headEnd reads until buf[r:] holds a whole header block and returns
// where it ends (past its blank line), growing buf up to h1MaxHeaderBytes.
func (c *h1Conn) headEnd() (int, error) {
	seen := 0 // of buf[r:w], searched already
	for {
		if i := bytes.Index(c.buf[c.r+seen:c.w], crlfcrlf); i >= 0 {
			return c.r + seen + i + len(crlfcrlf), nil
		}
		seen = max(0, c.w-c.r-len(crlfcrlf)+1)
		if c.w == len(c.buf) && c.r == 0 {
			if len(c.buf) >= h1MaxHeaderBytes {
				return 0, errors.New("upstream answer: headers larger than 64 KiB")
			}
			c.buf = append(c.buf, make([]byte, len(c.buf))...)
		}
		if err := c.fill(); err != nil {
			if err == io.EOF && c.w > c.r {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
	}
}
