package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// fastUpstream is the HTTP/1.1 client for plain http:// upstreams without a
// proxy. Its answers stream (StreamResponseBody), so an SSE body is relayed
// as it arrives, and a stream can be closed from another goroutine while a
// Read waits, which is how a timer or a departed client stops an attempt.
type fastUpstream struct {
	client *fasthttp.Client
	// conns are the open connections by address pair, so the read deadline
	// that bounded the wait for headers can be lifted once they arrived
	// (fasthttp keeps it for the body otherwise).
	conns sync.Map // connKey -> net.Conn
}

type connKey struct{ local, remote netip.AddrPort }

func newFastUpstream() *fastUpstream {
	f := &fastUpstream{}
	f.client = &fasthttp.Client{
		DialTimeout: func(addr string, timeout time.Duration) (net.Conn, error) {
			return dialAside(addr, timeout, f.track)
		},
		NoDefaultUserAgentHeader: true, // the client's User-Agent or none, as with net/http's forwarding
		DisablePathNormalizing:   true, // send the path exactly as built (Gemini's ":streamGenerateContent")
		MaxConnsPerHost:          math.MaxInt32,
		MaxIdleConnDuration:      90 * time.Second,
		StreamResponseBody:       true,
		// A keep-alive connection the upstream closed while idle fails the
		// next request before any byte of an answer; net/http resends in
		// that case and so does this, once.
		MaxIdemponentCallAttempts: 2,
		RetryIfErr: func(_ *fasthttp.Request, attempts int, err error) (bool, bool) {
			return false, attempts == 1 && staleConn(err)
		},
	}
	return f
}

// dialAside dials addr (and tracks the connection) on a goroutine of its
// own and waits for it. Below net.Dialer.Dial the stack runs several KiB
// deeper than anything else a request does; dialled from the request's
// goroutine, which is already deep in the handler there, it grows that
// goroutine's stack from 8 to 16 KiB. fasthttp reuses its goroutines, and a stream's goroutine waits
// at a depth that keeps the runtime from shrinking the stack back, so
// every open stream held 16 KiB of stack where 8 do (perf, issue 12:
// memory per stream). The dialling goroutine ends with the dial and its
// stack goes back to the runtime.
func dialAside(addr string, timeout time.Duration, track func(net.Conn) net.Conn) (net.Conn, error) {
	type dialed struct {
		c   net.Conn
		err error
	}
	ch := make(chan dialed, 1)
	go func() {
		d := net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		if timeout > 0 && timeout < d.Timeout {
			d.Timeout = timeout
		}
		c, err := d.Dial("tcp", addr)
		if err == nil {
			c = track(c)
		}
		ch <- dialed{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

func staleConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, fasthttp.ErrConnectionClosed) || errors.Is(err, syscall.EPIPE)
}

// do sends one attempt and returns once the response headers are in.
func (f *fastUpstream) do(rq *upstreamRequest) (*upstreamResponse, error) {
	if err := rq.ctx.Err(); err != nil {
		return nil, context.Cause(rq.ctx)
	}
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.SetRequestURI(rq.url)
	req.Header.SetMethod(fasthttp.MethodPost)
	rq.header(&req.Header)
	req.SetBodyRaw(rq.body) // no copy: rq.body outlives Do

	resp := fasthttp.AcquireResponse()
	var err error
	switch {
	case rq.watch:
		rq.timers.arm() // doWatched watches ctx
		err = f.doWatched(rq, req, resp)
	case rq.headerBy.IsZero():
		err = f.client.Do(req, resp)
	default:
		err = f.client.DoDeadline(req, resp, rq.headerBy)
	}
	if err != nil {
		fasthttp.ReleaseResponse(resp)
		if rq.timers != nil && !rq.headerBy.IsZero() && !time.Now().Before(rq.headerBy) {
			// The header deadline stood for the attempt's first timer.
			rq.timers.cancel(rq.timers.headerCause())
		}
		if cause := context.Cause(rq.ctx); cause != nil {
			return nil, cause
		}
		return nil, err
	}
	b := &fastBody{ctx: rq.ctx, size: resp.Header.ContentLength()}
	if s, ok := resp.BodyStream().(fasthttp.ReadCloserWithError); ok {
		b.stream, b.rd = s, s
		b.timers = rq.timers
		if b.conn = f.connOf(resp); b.conn != nil {
			// Armed at the body's first read of the socket (arm), which
			// a small answer, already in fasthttp's buffer with its
			// headers, never makes.
			b.liftDeadline = !rq.headerBy.IsZero()
			b.conn.body = b
		} else {
			b.stop = context.AfterFunc(rq.ctx, b.interrupt)
			rq.timers.arm()
		}
	} else {
		// The body came whole: nothing to interrupt, and readWhole takes
		// it as it is (Whole) instead of copying it.
		b.whole = resp.Body()
		b.rd = bytes.NewReader(b.whole)
	}
	return &upstreamResponse{StatusCode: resp.StatusCode(), Header: fastHeader{&resp.Header}, Body: b, ctx: rq.ctx}, nil
}

// doWatched sends rq on a connection of its own that is closed the moment
// rq.ctx ends, so the wait for the response headers ends with the attempt's
// timers even when they run on an injected clock (failover tests on a fake
// clock), not only at the wall-clock header deadline. fasthttp takes no
// context, and a pooled connection cannot be told apart from the others
// while its request waits; the one connection of a private HostClient can.
// The wall clock does not need it (its header deadline is the first of the
// attempt's timers) and keeps the pool: a dial per attempt costs a
// handshake.
func (f *fastUpstream) doWatched(rq *upstreamRequest, req *fasthttp.Request, resp *fasthttp.Response) error {
	var (
		mu    sync.Mutex
		conn  net.Conn
		ended bool
		ctx   = rq.ctx // not rq: the dial func would take it to the heap
	)
	hc := &fasthttp.HostClient{
		Addr: hostPort(req.URI()),
		Dial: func(addr string) (net.Conn, error) {
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err != nil {
				return nil, err
			}
			mu.Lock()
			defer mu.Unlock()
			if ended {
				c.Close()
				return nil, context.Cause(ctx)
			}
			conn = c
			return c, nil
		},
		NoDefaultUserAgentHeader: f.client.NoDefaultUserAgentHeader,
		DisablePathNormalizing:   f.client.DisablePathNormalizing,
		StreamResponseBody:       true,
		MaxConns:                 1,
	}
	// It fires when the attempt ends for any reason, which also closes the
	// connection after a success: it is this attempt's alone.
	context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		ended = true
		if conn != nil {
			conn.Close()
		}
	})
	if rq.headerBy.IsZero() {
		return hc.Do(req, resp)
	}
	err := hc.DoDeadline(req, resp, rq.headerBy)
	if err == nil {
		mu.Lock()
		_ = conn.SetReadDeadline(time.Time{}) // the body is bounded by the attempt's timers
		mu.Unlock()
	}
	return err
}

// hostPort is the address a plain http:// URI dials.
func hostPort(u *fasthttp.URI) string {
	host := string(u.Host())
	if _, _, err := net.SplitHostPort(host); err != nil {
		return net.JoinHostPort(host, "80")
	}
	return host
}

// track registers a new connection under its address pair.
func (f *fastUpstream) track(c net.Conn) net.Conn {
	key, ok := keyOf(c.LocalAddr(), c.RemoteAddr())
	if !ok {
		return c
	}
	tc := &trackedConn{Conn: c, sock: newRawSock(c), forget: func() { f.conns.Delete(key) }}
	f.conns.Store(key, tc)
	return tc
}

// connOf is the tracked connection a streamed response arrives on, nil
// when it is not one of the pool's (a watched attempt's own connection).
func (f *fastUpstream) connOf(resp *fasthttp.Response) *trackedConn {
	key, ok := keyOf(resp.LocalAddr(), resp.RemoteAddr())
	if !ok {
		return nil
	}
	if c, ok := f.conns.Load(key); ok {
		return c.(*trackedConn)
	}
	return nil
}

func keyOf(local, remote net.Addr) (connKey, bool) {
	l, ok1 := local.(*net.TCPAddr)
	r, ok2 := remote.(*net.TCPAddr)
	if !ok1 || !ok2 {
		return connKey{}, false
	}
	return connKey{l.AddrPort(), r.AddrPort()}, true
}

// trackedConn leaves the registry when closed.
type trackedConn struct {
	net.Conn
	sock   *rawSock // nil when c is not a TCP socket
	once   sync.Once
	forget func()
	// body is the streamed answer being read from the connection, from
	// its headers to its Close: its reads of the socket go through
	// fastBody.beforeSocketRead. Only the goroutine reading the body
	// sets, clears and uses it; the pool's lock orders that before the
	// connection's next user.
	body *fastBody
}

func (c *trackedConn) Read(p []byte) (int, error) {
	if b := c.body; b != nil {
		b.beforeSocketRead()
	}
	if c.sock != nil {
		return c.sock.Read(p)
	}
	return c.Conn.Read(p)
}

func (c *trackedConn) Write(p []byte) (int, error) {
	if c.sock != nil {
		return c.sock.Write(p)
	}
	return c.Conn.Write(p)
}

func (c *trackedConn) Close() error {
	c.once.Do(c.forget)
	return c.Conn.Close()
}

// fastHeader reads a fasthttp response header like http.Header.Get.
type fastHeader struct{ h *fasthttp.ResponseHeader }

func (h fastHeader) Get(k string) string { return string(h.h.Peek(k)) }

// fastBody is a fasthttp response body as an io.ReadCloser. When the
// attempt's context ends, the stream is closed under a waiting Read (which
// then fails with the context's cause) and the connection is dropped.
type fastBody struct {
	rd     io.Reader
	stream fasthttp.ReadCloserWithError // nil when the body came whole
	whole  []byte                       // the body when it came whole
	size   int                          // Content-Length; -1 chunked, -2 until close
	ctx    context.Context
	timers *attemptTimers // the attempt's, armed with the body
	conn   *trackedConn   // a streamed body's connection, when tracked
	// beforeRead, while a stream's relay reads the body, runs before each
	// read of the socket (beforeWait).
	beforeRead func()
	// armed: the attempt's end interrupts a read (stop is set) and, with
	// liftDeadline, the header deadline no longer bounds the body.
	armed, liftDeadline bool

	mu     sync.Mutex
	stop   func() bool // unregisters interrupt; nil until armed
	closed bool
}

// beforeSocketRead runs before each read of the body that has to go to
// the socket, that is whenever what fasthttp has buffered is used up and
// the read may wait for the upstream.
func (b *fastBody) beforeSocketRead() {
	if !b.armed {
		b.arm()
	}
	if b.beforeRead != nil {
		b.beforeRead()
	}
}

// arm readies a body on a tracked connection for a read that may wait:
// the attempt's timers start (attemptTimers), its end (a timer, the
// client leaving) interrupts the read, and the timers bound it instead of
// the header deadline fasthttp left on the connection. Done at the first
// read that goes to the socket, not when the headers arrive: a small
// answer comes in one segment with its headers and is read from
// fasthttp's buffer, and then the timers, the context hook (five
// allocations) and the deadline (a timer update) would be spent for
// nothing (perf, issue 12). Such a connection goes back to the pool with
// the header deadline still set; fasthttp sets its own at the next use.
func (b *fastBody) arm() {
	b.armed = true
	b.timers.arm()
	b.mu.Lock()
	if !b.closed {
		b.stop = context.AfterFunc(b.ctx, b.interrupt)
	}
	b.mu.Unlock()
	if b.liftDeadline {
		_ = b.conn.SetReadDeadline(time.Time{}) // a closed conn fails the Read anyway
	}
}

// beforeWait makes f run before each read of the body that has to go to
// the socket; nil stops it. It reports whether it can (a streamed body on
// a tracked connection). Below fasthttp's buffer the relay's flush
// happens once per socket read: events that arrived together go out in
// one write, where a flush before every read of the body, which returns
// one HTTP chunk (one event) at a time, made a write per event (perf,
// issue 12).
func (b *fastBody) beforeWait(f func()) bool {
	if b.conn == nil {
		return false
	}
	b.beforeRead = f
	return true
}

func (b *fastBody) Read(p []byte) (int, error) {
	n, err := b.rd.Read(p)
	if err != nil && err != io.EOF {
		if cause := context.Cause(b.ctx); cause != nil {
			err = cause
		}
	}
	return n, err
}

// Whole is the body when fasthttp read it whole with the headers (it is
// not streamed), ok false otherwise. The response is never pooled (see
// Close), so the bytes stay valid.
func (b *fastBody) Whole() ([]byte, bool) { return b.whole, b.stream == nil }

// Size is the body's announced length, or a negative number when it was
// not announced.
func (b *fastBody) Size() int { return b.size }

// interrupt runs when the attempt's context ends.
func (b *fastBody) interrupt() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed && b.stream != nil {
		_ = b.stream.CloseWithError(context.Cause(b.ctx)) // always nil
	}
}

// Close hands a fully read connection back to the pool, or drops one
// whose body was not read to its end. The response itself is left to the
// garbage collector rather than returned to fasthttp's pool: callers read
// its headers after closing the body (to classify an error, to copy them
// to the client), and a pooled response would by then be another's.
func (b *fastBody) Close() error {
	if b.conn != nil {
		b.conn.body = nil // before the connection goes back to the pool
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop != nil {
		b.stop()
	}
	if b.closed {
		return nil
	}
	b.closed = true
	if b.stream != nil {
		_ = b.stream.CloseWithError(nil) // always nil
	}
	return nil
}
