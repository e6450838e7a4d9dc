package engine

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// upstreams sends attempts upstream with one of two clients. Plain
// http:// URLs without a proxy (local relays, other gateways, the mock) go
// through ccload's own HTTP/1.1 client (h1Upstream): it writes a request in
// one syscall and keeps no goroutines per connection, which is most of
// what a proxy hop costs. Everything else goes through net/http, which
// speaks HTTP/2 to the providers over TLS and supports http, https and
// socks5 proxies. Both cancel an attempt the moment its context ends: a
// timer fired, the client hung up (hangups), or a write to a client that
// went away failed. net/http watches the context from the start; the
// HTTP/1.1 client bounds its wait for the headers with a deadline, has a
// hang-up close its connection under that wait (h1Conn.interruptHead), and
// watches the context once it reads the body (h1Body.arm).
type upstreams struct {
	inject  http.RoundTripper
	mu      sync.Mutex
	clients map[string]*http.Client // proxy URL ("" = direct) -> client
	h1      *h1Upstream
}

func newUpstreams(rt http.RoundTripper) *upstreams {
	return &upstreams{inject: rt, clients: map[string]*http.Client{}, h1: newH1Upstream()}
}

// upstreamRequest is one attempt's request, whichever client sends it.
type upstreamRequest struct {
	// ctx ends the attempt; its cause says why (errFirstByteTimeout, ...).
	ctx   context.Context
	proxy string // the channel's proxy URL, "" for none
	url   string
	body  []byte
	// header sets the request headers (the client's forwardable ones, the
	// channel key, rewrite rules).
	header func(h headerSetter)
	// headerBy bounds the wait for the response headers (zero: none). The
	// attempt's timers end ctx too; this lets the HTTP/1.1 client stop at
	// once without a goroutine watching ctx.
	headerBy time.Time
	// watch: ctx may end before headerBy for a reason the wall clock does
	// not know (timers on an injected clock); the HTTP/1.1 client then
	// closes its connection when ctx ends, as net/http watches it
	// (h1Upstream.conn).
	watch bool
	// onResponse, when set, sees the response before anything reads its
	// body (debug capture wraps the body).
	onResponse func(*upstreamResponse)
	// timers are the attempt's, armed by the client once it waits in a
	// way ctx can interrupt; nil for a probe, whose ctx has a deadline.
	timers *attemptTimers
	// lent, when set, is set once net/http takes body, which may be the
	// request's pooled body (request.dropBody); nil for a probe.
	lent *bool
	// headerWait, when set, holds the HTTP/1.1 client's connection while
	// it waits for the answer headers, for a hang-up to close
	// (h1Conn.interruptHead); nil for a probe.
	headerWait *atomic.Pointer[h1Conn]
}

// headerSetter is what setUpstreamHeaders needs of a request's headers:
// both http.Header and *fasthttp.RequestHeader have it.
type headerSetter interface {
	Add(key, value string)
	Set(key, value string)
	Del(key string)
}

// upstreamResponse is an upstream answer: status, the headers the engine
// reads, and the body, which the caller must close.
type upstreamResponse struct {
	StatusCode int
	Header     interface{ Get(string) string }
	Body       io.ReadCloser
	ctx        context.Context // the attempt's: context.Cause says why it ended
}

// errBadProxy and errBadURL are setup failures: nothing was sent.
type setupError struct{ msg string }

func (e *setupError) Error() string { return e.msg }

var (
	errBadProxy = &setupError{"bad proxy setting"}
	errBadURL   = &setupError{"bad upstream URL"}
)

// do sends one attempt. An error before any response is a setupError or a
// transport error to classify.
func (u *upstreams) do(rq *upstreamRequest) (*upstreamResponse, error) {
	if u.inject == nil && rq.proxy == "" && strings.HasPrefix(rq.url, "http://") {
		if t, ok := parseH1Target(rq.url); ok {
			return u.h1.do(rq, t)
		}
	}
	rq.timers.arm() // net/http watches ctx from here on
	if rq.lent != nil {
		*rq.lent = true // the transport may read the body after RoundTrip returns
	}
	client, err := u.client(rq.proxy)
	if err != nil {
		return nil, errBadProxy
	}
	hreq, err := http.NewRequestWithContext(rq.ctx, http.MethodPost, rq.url, bytes.NewReader(rq.body))
	if err != nil {
		return nil, errBadURL
	}
	rq.header(hreq.Header)
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, err
	}
	return &upstreamResponse{StatusCode: resp.StatusCode, Header: resp.Header, Body: resp.Body, ctx: rq.ctx}, nil
}

// client returns the net/http client for a channel's proxy setting.
func (u *upstreams) client(proxy string) (*http.Client, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if c, ok := u.clients[proxy]; ok {
		return c, nil
	}
	rt := u.inject
	if rt == nil {
		t := &http.Transport{
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          512,
			MaxIdleConnsPerHost:   64,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		}
		if proxy != "" {
			p, err := url.Parse(proxy)
			if err != nil {
				return nil, err
			}
			t.Proxy = http.ProxyURL(p)
		}
		rt = t
	}
	// No client timeout: attempts bound themselves with first-byte and
	// total timers on the request context. Redirects are not followed: an
	// API endpoint that redirects is misconfigured, and following would
	// resend the key to another host.
	c := &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	u.clients[proxy] = c
	return c, nil
}

// HTTPClient returns the client upstream calls through proxy ("" = direct)
// use, for other outbound fetches that should honour the same proxy
// settings (the price catalog). It has no timeout and follows no
// redirects: callers bound their requests with a context.
func (e *Engine) HTTPClient(proxy string) (*http.Client, error) { return e.upstream.client(proxy) }
