package upstream

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/ccload/ccload/internal/rawsock"
)

// h1Client is the HTTP/1.1 client for plain http:// upstreams without a
// proxy (local relays, other gateways, the mock). It keeps idle keep-alive
// connections per address, writes a request in one system call (two for a
// body over h1OneWrite), and reads the answer on the attempt's goroutine
// without one of its own per connection.
//
// It replaced fasthttp's client: for the one request shape
// ccload sends (a POST with a body whose headers it built itself) that
// client normalised and sanitised every header name and value twice,
// parsed the URL on every request, set two deadlines, and allocated a
// response with its header buffers each time: 7% of the gateway's CPU
// in the load benchmark's non-stream scenario besides the socket calls.
//
// An answer streams: its body is read as it arrives, so an SSE stream is
// relayed event by event, and closing the connection from another
// goroutine (h1Body.interrupt) ends a Read that waits, which is how a timer
// or a departed client stops an attempt.
type h1Client struct {
	mu      sync.Mutex
	idle    map[string][]*h1Conn // by address, the most recently used last
	reaping bool                 // a reap is scheduled

	tls h1TLS
}

const (
	h1IdleTimeout     = 90 * time.Second
	h1MaxIdlePerAddr  = 512
	h1DialTimeout     = 10 * time.Second
	h1BufSize         = 4 << 10  // a connection's read buffer, which a whole small answer fits
	h1MaxHeaderBytes  = 64 << 10 // response headers beyond this fail the attempt
	h1OneWrite        = 64 << 10 // a request up to this size goes out in one write
	h1MaxChunkLineLen = h1BufSize
)

func newH1Client() *h1Client { return &h1Client{idle: map[string][]*h1Conn{}} }

// do sends one attempt and returns once the response headers are in.
func (u *h1Client) do(rq *Request, t h1Target) (*Response, error) {
	if err := rq.Ctx.Err(); err != nil {
		return nil, context.Cause(rq.Ctx)
	}
	req := h1Reqs.Get().(*h1Req)
	defer req.release()
	rq.Header(req)
	req.encode(t, rq.Body)
	for try := 0; ; try++ {
		c, reused, err := u.conn(rq, t, try > 0)
		if err != nil {
			return nil, u.failed(rq, err)
		}
		resp, err := c.roundTrip(u, rq, req)
		if err == nil {
			return resp, nil
		}
		stale := reused && !c.answered && staleConn(err)
		c.close()
		// A keep-alive connection the upstream closed while idle fails
		// the next request before any byte of an answer; net/http sends
		// again in that case, and so does this, once, on a new connection.
		if !stale || try > 0 || rq.Ctx.Err() != nil {
			return nil, u.failed(rq, err)
		}
	}
}

// failed is the error an attempt that got no answer returns: the context's
// cause when it ended (a timer, the client leaving), which the wall-clock
// header deadline stands for.
func (u *h1Client) failed(rq *Request, err error) error {
	if rq.Timers != nil && !rq.HeaderBy.IsZero() && !time.Now().Before(rq.HeaderBy) {
		// The header deadline stood for the attempt's first timer.
		rq.Timers.HeaderTimedOut()
	}
	if cause := context.Cause(rq.Ctx); cause != nil {
		return cause
	}
	return err
}

func staleConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// conn is a connection to addr: an idle one unless fresh, else a new one.
// An attempt that watches its context (rq.Watch) gets one of its own,
// closed when the attempt ends.
func (u *h1Client) conn(rq *Request, t h1Target, fresh bool) (c *h1Conn, reused bool, err error) {
	addr := t.poolKey()
	if !fresh && !rq.Watch {
		for c := u.take(addr); c != nil; c = u.take(addr) {
			if c.idleUsable() {
				return c, true, nil
			}
			c.close()
		}
	}
	timeout := h1DialTimeout
	if !rq.HeaderBy.IsZero() {
		if timeout = min(timeout, time.Until(rq.HeaderBy)); timeout <= 0 {
			return nil, false, &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
		}
	}
	var cfg *tls.Config
	if t.tls {
		cfg = u.tls.config(t.addr)
	}
	nc, tc, rc, err := dialAside(t.addr, timeout, cfg)
	if err != nil {
		return nil, false, err
	}
	c = &h1Conn{nc: nc, tc: tc, rec: rc, sock: rawsock.New(nc), addr: addr}
	if rq.Watch {
		c.private = true
		ctx := rq.Ctx // not rq: the func would take it to the heap
		context.AfterFunc(ctx, func() { nc.Close() })
	}
	return c, false, nil
}

// take pops addr's most recently used idle connection, closing the ones
// idle too long on the way.
func (u *h1Client) take(addr string) *h1Conn {
	now := time.Now()
	u.mu.Lock()
	defer u.mu.Unlock()
	conns := u.idle[addr]
	for len(conns) > 0 {
		c := conns[len(conns)-1]
		conns[len(conns)-1] = nil
		conns = conns[:len(conns)-1]
		if now.Sub(c.idleAt) < h1IdleTimeout {
			u.idle[addr] = conns
			return c
		}
		go c.close() // a close may wait; not under the lock
	}
	delete(u.idle, addr)
	return nil
}

// put keeps c for the next request to its address, or closes it.
func (u *h1Client) put(c *h1Conn) {
	if c.r != c.w || c.closeAfter || c.private {
		// Bytes past the answer (nothing this client asked for), an
		// upstream that closes it, or an attempt's own connection.
		c.close()
		return
	}
	c.r, c.w = 0, 0
	if c.bufp != nil {
		*c.bufp = c.buf
		h1Bufs.Put(c.bufp) // an idle connection holds no buffer
		c.bufp, c.buf = nil, nil
	}
	c.idleAt = time.Now()
	u.mu.Lock()
	conns := u.idle[c.addr]
	if len(conns) >= h1MaxIdlePerAddr {
		u.mu.Unlock()
		c.close()
		return
	}
	u.idle[c.addr] = append(conns, c)
	reap := !u.reaping
	u.reaping = true
	u.mu.Unlock()
	if reap {
		time.AfterFunc(h1IdleTimeout, u.reap)
	}
}

// reap closes the connections idle for h1IdleTimeout, and comes back
// while any are left.
func (u *h1Client) reap() {
	now := time.Now()
	var stale []*h1Conn
	u.mu.Lock()
	for addr, conns := range u.idle {
		kept := conns[:0]
		for _, c := range conns {
			if now.Sub(c.idleAt) >= h1IdleTimeout {
				stale = append(stale, c)
			} else {
				kept = append(kept, c)
			}
		}
		clear(conns[len(kept):])
		if len(kept) == 0 {
			delete(u.idle, addr)
		} else {
			u.idle[addr] = kept
		}
	}
	u.reaping = len(u.idle) > 0
	again := u.reaping
	u.mu.Unlock()
	for _, c := range stale {
		c.close()
	}
	if again {
		time.AfterFunc(h1IdleTimeout/3, u.reap)
	}
}
