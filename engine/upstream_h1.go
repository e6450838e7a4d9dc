package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// h1Upstream is the HTTP/1.1 client for plain http:// upstreams without a
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
type h1Upstream struct {
	mu      sync.Mutex
	idle    map[string][]*h1Conn // by address, the most recently used last
	reaping bool                 // a reap is scheduled
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

func newH1Upstream() *h1Upstream { return &h1Upstream{idle: map[string][]*h1Conn{}} }

// h1Target is where a request for a URL goes.
type h1Target struct {
	addr string // host:port to dial
	host string // the Host header
	uri  string // the request target: path and query
}

// parseH1Target splits a plain http:// URL. It reports false for a URL
// this client does not send (credentials in it, bytes that do not belong
// in a request line), which then goes through net/http.
func parseH1Target(raw string) (h1Target, bool) {
	rest, ok := strings.CutPrefix(raw, "http://")
	if !ok {
		return h1Target{}, false
	}
	host, uri := rest, "/"
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host, uri = rest[:i], rest[i:]
	}
	if i := strings.IndexByte(uri, '#'); i >= 0 {
		uri = uri[:i]
	}
	if uri == "" || uri[0] == '?' {
		uri = "/" + uri
	}
	if host == "" || strings.IndexByte(host, '@') >= 0 {
		return h1Target{}, false
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c == 0x7f {
			return h1Target{}, false
		}
	}
	addr := host
	switch {
	case strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]"):
		addr = host + ":80"
	case strings.IndexByte(host, ':') < 0:
		addr = host + ":80"
	}
	return h1Target{addr: addr, host: host, uri: uri}, true
}

// do sends one attempt and returns once the response headers are in.
func (u *h1Upstream) do(rq *upstreamRequest, t h1Target) (*upstreamResponse, error) {
	if err := rq.ctx.Err(); err != nil {
		return nil, context.Cause(rq.ctx)
	}
	req := h1Reqs.Get().(*h1Req)
	defer req.release()
	rq.header(req)
	req.encode(t, rq.body)
	for try := 0; ; try++ {
		c, reused, err := u.conn(rq, t.addr, try > 0)
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
		if !stale || try > 0 || rq.ctx.Err() != nil {
			return nil, u.failed(rq, err)
		}
	}
}

// failed is the error an attempt that got no answer returns: the context's
// cause when it ended (a timer, the client leaving), which the wall-clock
// header deadline stands for.
func (u *h1Upstream) failed(rq *upstreamRequest, err error) error {
	if rq.timers != nil && !rq.headerBy.IsZero() && !time.Now().Before(rq.headerBy) {
		// The header deadline stood for the attempt's first timer.
		rq.timers.cancel(rq.timers.headerCause())
	}
	if cause := context.Cause(rq.ctx); cause != nil {
		return cause
	}
	return err
}

// dialAside dials addr on a goroutine of its own and waits for it. Below
// net.Dialer.Dial the stack runs several KiB deeper than anything else a
// request does; dialled from the request's goroutine, which is already
// deep in the handler there, it grows that goroutine's stack from 8 to 16
// KiB. fasthttp reuses its goroutines, and a stream's goroutine waits at a
// depth that keeps the runtime from shrinking the stack back, so every
// open stream held 16 KiB of stack where 8 do (perf: memory per
// stream). The dialling goroutine ends with the dial and its stack goes
// back to the runtime.
func dialAside(addr string, timeout time.Duration) (net.Conn, error) {
	type dialed struct {
		c   net.Conn
		err error
	}
	ch := make(chan dialed, 1)
	go func() {
		d := net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
		c, err := d.Dial("tcp", addr)
		ch <- dialed{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

func staleConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// conn is a connection to addr: an idle one unless fresh, else a new one.
// An attempt that watches its context (rq.watch) gets one of its own,
// closed when the attempt ends.
func (u *h1Upstream) conn(rq *upstreamRequest, addr string, fresh bool) (c *h1Conn, reused bool, err error) {
	if !fresh && !rq.watch {
		for c := u.take(addr); c != nil; c = u.take(addr) {
			if c.idleUsable() {
				return c, true, nil
			}
			c.close()
		}
	}
	timeout := h1DialTimeout
	if !rq.headerBy.IsZero() {
		if timeout = min(timeout, time.Until(rq.headerBy)); timeout <= 0 {
			return nil, false, &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
		}
	}
	nc, err := dialAside(addr, timeout)
	if err != nil {
		return nil, false, err
	}
	c = &h1Conn{nc: nc, sock: newRawSock(nc), addr: addr}
	if rq.watch {
		c.private = true
		ctx := rq.ctx // not rq: the func would take it to the heap
		context.AfterFunc(ctx, func() { nc.Close() })
	}
	return c, false, nil
}

// take pops addr's most recently used idle connection, closing the ones
// idle too long on the way.
func (u *h1Upstream) take(addr string) *h1Conn {
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
func (u *h1Upstream) put(c *h1Conn) {
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
func (u *h1Upstream) reap() {
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

// h1Bufs are connections' read buffers, held while an answer is read.
var h1Bufs = sync.Pool{New: func() any { b := make([]byte, h1BufSize); return &b }}

// h1Conn is one connection to an upstream.
type h1Conn struct {
	nc   net.Conn
	sock *rawSock // nil when nc is not a TCP socket
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
	private    bool // an attempt's own (rq.watch): never pooled
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
		return !c.sock.received()
	}
	return !idleReceived(c.nc, c.deadline)
}

// interruptHead closes the connection if an attempt is waiting on it for
// the answer headers: the attempt's client left (request.leave). The
// attempt then fails with its context's cause, and the upstream sees the
// request dropped instead of answering it to nobody.
func (c *h1Conn) interruptHead() {
	if c.headWait.CompareAndSwap(1, 2) {
		c.close()
	}
}

func (c *h1Conn) readSock(p []byte) (int, error) {
	if c.sock != nil {
		return c.sock.Read(p)
	}
	return c.nc.Read(p)
}

func (c *h1Conn) write(p []byte) error {
	var err error
	if c.sock != nil {
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

// fill reads from the socket into buf, after making room. It returns
// io.EOF only when the upstream closed the connection.
func (c *h1Conn) fill() error {
	if c.r == c.w {
		c.r, c.w = 0, 0
	} else if c.w == len(c.buf) && c.r > 0 {
		c.w = copy(c.buf, c.buf[c.r:c.w])
		c.r = 0
	}
	if c.w == len(c.buf) {
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
func (c *h1Conn) roundTrip(u *h1Upstream, rq *upstreamRequest, req *h1Req) (*upstreamResponse, error) {
	c.answered = false
	if err := c.setDeadline(rq.headerBy); err != nil {
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
	if rq.watch {
		rq.timers.arm() // the connection is closed when ctx ends
	}
	if c.bufp == nil {
		c.bufp = h1Bufs.Get().(*[]byte)
		c.buf = *c.bufp
	}
	wait := rq.headerWait
	if c.private {
		wait = nil // closed with ctx already
	}
	if wait != nil {
		c.headWait.Store(1)
		wait.Store(c)
		if rq.ctx.Err() != nil { // the client left before the Store
			c.interruptHead()
		}
	}
	h, status, err := c.readHead()
	if wait != nil {
		wait.Store(nil)
		if !c.headWait.CompareAndSwap(1, 0) {
			// A hang-up closed the connection, perhaps once the headers
			// were in: it must not go back to the pool.
			return nil, net.ErrClosed
		}
	}
	if err != nil {
		return nil, err
	}
	b := &h1Body{u: u, c: c, ctx: rq.ctx, timers: rq.timers, size: -2}
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
		b.liftDeadline = !rq.headerBy.IsZero()
	}
	return &upstreamResponse{StatusCode: status, Header: h, Body: b, ctx: rq.ctx}, nil
}

// readHead reads the status line and headers of the answer, skipping
// interim (1xx) answers.
func (c *h1Conn) readHead() (*h1Header, int, error) {
	for {
		end, err := c.headEnd()
		if err != nil {
			return nil, 0, err
		}
		h, status, err := parseHead(c.buf[c.r:end])
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

var (
	crlf     = []byte("\r\n")
	crlfcrlf = []byte("\r\n\r\n")
)

// h1Header is an answer's headers, looked up as http.Header.Get does
// (case-insensitive, the first of repeated names).
type h1Header struct {
	kv      [][2]string
	length  int  // Content-Length, -1 when absent
	chunked bool // Transfer-Encoding ends in chunked
	close   bool // the upstream closes the connection after the answer
	// untilClose: a Transfer-Encoding other than chunked, so the body
	// ends with the connection.
	untilClose bool
	// inline holds kv's first pairs: one allocation for a usual answer's
	// headers.
	inline [8][2]string
}

func (h *h1Header) Get(name string) string {
	for _, kv := range h.kv {
		if len(kv[0]) == len(name) && strings.EqualFold(kv[0], name) {
			return kv[1]
		}
	}
	return ""
}

var errMalformedHeader = errors.New("upstream answer: malformed header")

// parseHead parses a header block (status line, headers, blank line).
func parseHead(block []byte) (*h1Header, int, error) {
	line, rest, _ := bytes.Cut(block, crlf)
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' || (len(line) > 12 && line[12] != ' ') {
		return nil, 0, errors.New("upstream answer: malformed status line")
	}
	status := 0
	for _, d := range line[9:12] {
		if d < '0' || d > '9' {
			return nil, 0, errors.New("upstream answer: malformed status code")
		}
		status = status*10 + int(d-'0')
	}
	h := &h1Header{length: -1, close: line[7] == '0'}
	h.kv = h.inline[:0]
	all := string(rest) // one string for every name and value
	for {
		i := strings.Index(all, "\r\n")
		if i <= 0 {
			break // the blank line (the block ends with one)
		}
		l := all[:i]
		all = all[i+2:]
		if l[0] == ' ' || l[0] == '\t' {
			if len(h.kv) == 0 {
				return nil, 0, errMalformedHeader
			}
			// An obsolete line folding: part of the previous value.
			h.kv[len(h.kv)-1][1] += " " + trimOWS(l)
			continue
		}
		colon := strings.IndexByte(l, ':')
		if colon <= 0 || l[colon-1] == ' ' || l[colon-1] == '\t' {
			return nil, 0, errMalformedHeader
		}
		name, value := l[:colon], trimOWS(l[colon+1:])
		h.kv = append(h.kv, [2]string{name, value})
		switch { // by length first: most names are none of these
		case len(name) == len("Content-Length") && strings.EqualFold(name, "Content-Length"):
			v, err := strconv.Atoi(value)
			if err != nil || v < 0 || (h.length >= 0 && h.length != v) {
				return nil, 0, errors.New("upstream answer: bad Content-Length")
			}
			h.length = v
		case len(name) == len("Transfer-Encoding") && strings.EqualFold(name, "Transfer-Encoding"):
			codings := strings.Split(value, ",")
			h.chunked = strings.EqualFold(strings.TrimSpace(codings[len(codings)-1]), "chunked")
			if !h.chunked {
				h.untilClose = true // read to the end of the connection
			}
		case len(name) == len("Connection") && strings.EqualFold(name, "Connection"):
			for _, tok := range strings.Split(value, ",") {
				switch tok = strings.TrimSpace(tok); {
				case strings.EqualFold(tok, "close"):
					h.close = true
				case strings.EqualFold(tok, "keep-alive") && line[7] == '0':
					h.close = false
				}
			}
		}
	}
	if h.chunked || h.untilClose {
		h.length = -1 // Transfer-Encoding wins (RFC 9112 §6.3)
	}
	return h, status, nil
}

// trimOWS trims the spaces and tabs around a header value.
func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// h1Body is an answer's body as an io.ReadCloser: whole when it came with
// the headers, else read from the connection as it arrives. When the
// attempt's context ends, the connection is closed under a waiting Read
// (which then fails with the context's cause).
type h1Body struct {
	u      *h1Upstream
	c      *h1Conn // nil when the body came whole
	ctx    context.Context
	timers *attemptTimers // the attempt's, armed with the body

	whole []byte // the body when it came whole
	off   int    // read offset in whole

	size    int // Content-Length; -1 chunked, -2 until close
	left    int // of size, or of the current chunk when chunked
	chunked bool
	// Chunked: inChunk while a chunk's data is read (left counts it),
	// needCRLF once it is, ended after the last chunk and its trailers.
	inChunk, needCRLF, ended bool
	err                      error

	// beforeRead, while a stream's relay reads the body, runs before each
	// read of the socket (beforeWait).
	beforeRead func()
	// armed: the attempt's end interrupts a read (stop is set) and, with
	// liftDeadline, the header deadline no longer bounds the body.
	armed, liftDeadline bool

	mu       sync.Mutex
	stop     func() bool // unregisters interrupt; nil until armed
	closed   bool
	released bool // read to its end: c went back to the pool or was closed
}

// Whole is the body when it came whole with the headers, ok false
// otherwise. The bytes are the body's own.
func (b *h1Body) Whole() ([]byte, bool) { return b.whole, b.whole != nil }

// Size is the body's announced length, or a negative number when it was
// not announced.
func (b *h1Body) Size() int { return b.size }

// beforeWait makes f run before each read of the body that has to go to
// the socket; nil stops it. It reports whether it can (a streamed body).
// The relay's flush then happens once per socket read: events that arrived
// together go out in one write (perf).
func (b *h1Body) beforeWait(f func()) bool {
	if b.whole != nil || b.c.private {
		return false
	}
	b.beforeRead = f
	return true
}

// beforeSocketRead runs before each read of the body that may wait for
// the upstream.
func (b *h1Body) beforeSocketRead() {
	if !b.armed {
		b.arm()
	}
	if b.beforeRead != nil {
		b.beforeRead()
	}
}

// arm readies the body for a read that may wait: the attempt's timers
// start (attemptTimers), its end (a timer, the client leaving) interrupts
// the read, and the timers bound it instead of the header deadline. Done
// at the first read that goes to the socket, not with the headers: a small
// answer arrives whole with them, and then the timers, the context hook
// and the deadline would be spent for nothing (perf).
func (b *h1Body) arm() {
	b.armed = true
	b.timers.arm()
	b.mu.Lock()
	if !b.closed {
		b.stop = context.AfterFunc(b.ctx, b.interrupt)
	}
	b.mu.Unlock()
	if b.liftDeadline {
		_ = b.c.setDeadline(time.Time{}) // a closed conn fails the Read anyway
	}
}

// interrupt runs when the attempt's context ends.
func (b *h1Body) interrupt() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed && !b.released {
		b.c.close()
	}
}

func (b *h1Body) Read(p []byte) (int, error) {
	if b.whole != nil {
		if b.off >= len(b.whole) {
			return 0, io.EOF
		}
		n := copy(p, b.whole[b.off:])
		b.off += n
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := b.read(p)
	switch {
	case err == io.EOF:
		b.err = io.EOF
		b.done()
	case err != nil:
		if cause := context.Cause(b.ctx); cause != nil {
			err = cause
		}
		b.err = err
	}
	return n, err
}

// read reads the next bytes of the body, io.EOF at its end.
func (b *h1Body) read(p []byte) (int, error) {
	if b.chunked && !b.inChunk {
		if b.ended {
			return 0, io.EOF
		}
		if err := b.nextChunk(); err != nil {
			return 0, err
		}
		if b.ended {
			return 0, io.EOF
		}
	}
	if b.size >= 0 || b.chunked {
		if b.left == 0 {
			return 0, io.EOF
		}
		p = p[:min(len(p), b.left)]
	}
	n, err := b.data(p)
	if b.size >= 0 || b.chunked {
		b.left -= n
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if b.chunked && b.left == 0 {
			b.inChunk, b.needCRLF = false, true
		}
	}
	if n > 0 {
		return n, nil
	}
	return 0, err
}

// data reads what is buffered, or else from the socket: straight into p
// when p is large, so a long answer is not copied twice.
func (b *h1Body) data(p []byte) (int, error) {
	c := b.c
	if c.r == c.w {
		b.beforeSocketRead()
		if len(p) >= len(c.buf) {
			return c.readSock(p)
		}
		if err := c.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.buf[c.r:c.w])
	c.r += n
	return n, nil
}

// nextChunk reads the CRLF that ends the previous chunk's data and the
// next chunk's size line; after the last chunk (size 0), the trailers,
// and sets ended.
func (b *h1Body) nextChunk() error {
	if b.needCRLF {
		l, err := b.line()
		if err != nil {
			return err
		}
		if len(l) != 0 {
			return errors.New("upstream answer: malformed chunk end")
		}
		b.needCRLF = false
	}
	l, err := b.line()
	if err != nil {
		return err
	}
	size, ok := chunkSize(l)
	if !ok {
		return errors.New("upstream answer: malformed chunk size")
	}
	if size > 0 {
		b.left, b.inChunk = size, true
		return nil
	}
	for { // trailers, up to the blank line
		l, err := b.line()
		if err != nil {
			return err
		}
		if len(l) == 0 {
			b.ended = true
			return nil
		}
	}
}

// chunkSize parses a chunk-size line: hex digits, then optional
// whitespace and extensions, which are ignored.
func chunkSize(l []byte) (int, bool) {
	size, i := 0, 0
	for ; i < len(l); i++ {
		c := l[i]
		var d int
		switch {
		case '0' <= c && c <= '9':
			d = int(c - '0')
		case 'a' <= c && c <= 'f':
			d = int(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = int(c-'A') + 10
		default:
			if i == 0 || (c != ';' && c != ' ' && c != '\t') {
				return 0, false
			}
			return size, true
		}
		if size > 1<<40 {
			return 0, false
		}
		size = size<<4 | d
	}
	return size, i > 0
}

// line reads one CRLF-terminated line and returns it without the CRLF,
// valid until the next read of the connection.
func (b *h1Body) line() ([]byte, error) {
	c := b.c
	seen := 0 // of buf[r:w], searched already
	for {
		if i := bytes.Index(c.buf[c.r+seen:c.w], crlf); i >= 0 {
			l := c.buf[c.r : c.r+seen+i]
			c.r += seen + i + len(crlf)
			return l, nil
		}
		if c.w-c.r >= h1MaxChunkLineLen {
			return nil, errors.New("upstream answer: chunk line too long")
		}
		seen = max(0, c.w-c.r-len(crlf)+1)
		b.beforeSocketRead()
		if err := c.fill(); err != nil {
			return nil, unexpected(err)
		}
	}
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// done hands a body read to its end back: its connection to the pool.
// Only the goroutine reading the body calls it.
func (b *h1Body) done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.released {
		return
	}
	b.released = true
	if b.stop != nil && !b.stop() {
		// interrupt ran or is running: the connection is closed.
		b.stop = nil
		return
	}
	b.stop = nil
	if b.chunked || b.size >= 0 {
		b.u.put(b.c)
	} else {
		b.c.close()
	}
}

// Close hands a fully read connection back to the pool (done did), or
// drops one whose body was not read to its end. It may run beside a Read
// that waits, which then fails.
func (b *h1Body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop != nil {
		b.stop()
		b.stop = nil
	}
	if b.closed {
		return nil
	}
	b.closed = true
	if b.c != nil && !b.released {
		b.c.close()
	}
	return nil
}

// h1Req is a request's head being built: the headers rq.header sets, then
// the encoded request line and headers (and the body when small).
type h1Req struct {
	kv   [][2]string
	buf  []byte
	body []byte // written after buf; nil when buf holds it
}

var h1Reqs = sync.Pool{New: func() any { return &h1Req{kv: make([][2]string, 0, 16), buf: make([]byte, 0, 2<<10)} }}

func (r *h1Req) release() {
	clear(r.kv)
	r.kv, r.body = r.kv[:0], nil
	if cap(r.buf) > h1OneWrite+4<<10 {
		r.buf = make([]byte, 0, 2<<10) // an agent's large body is not kept
	}
	r.buf = r.buf[:0]
	h1Reqs.Put(r)
}

func (r *h1Req) Add(k, v string) { r.kv = append(r.kv, [2]string{k, v}) }

func (r *h1Req) Set(k, v string) {
	r.Del(k)
	r.Add(k, v)
}

func (r *h1Req) Del(k string) {
	kept := r.kv[:0]
	for _, kv := range r.kv {
		if !strings.EqualFold(kv[0], k) {
			kept = append(kept, kv)
		}
	}
	clear(r.kv[len(kept):])
	r.kv = kept
}

// encode writes the request line and headers, with the body when the
// whole request fits one write. Framing is this client's (Content-Length,
// no Transfer-Encoding or Connection from rq.header); a Host set by a
// channel's rewrite rule replaces the URL's. A value's line breaks become
// spaces and a name that is not a token is left out, so nothing set here
// can split the request.
func (r *h1Req) encode(t h1Target, body []byte) {
	host := t.host
	for _, kv := range r.kv {
		if strings.EqualFold(kv[0], "Host") {
			host = kv[1]
		}
	}
	b := append(r.buf[:0], "POST "...)
	b = append(b, t.uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = appendHeaderValue(b, host)
	b = append(b, "\r\n"...)
	for _, kv := range r.kv {
		if !validHeaderName(kv[0]) || framingHeader(kv[0]) {
			continue
		}
		b = append(b, kv[0]...)
		b = append(b, ": "...)
		b = appendHeaderValue(b, kv[1])
		b = append(b, "\r\n"...)
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	if len(b)+len(body) <= h1OneWrite {
		b = append(b, body...)
		r.body = nil
	} else {
		r.body = body
	}
	r.buf = b
}

func framingHeader(name string) bool {
	return strings.EqualFold(name, "Host") || strings.EqualFold(name, "Content-Length") ||
		strings.EqualFold(name, "Transfer-Encoding") || strings.EqualFold(name, "Connection")
}

func appendHeaderValue(b []byte, v string) []byte {
	if !strings.ContainsAny(v, "\r\n") {
		return append(b, v...)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return b
}
