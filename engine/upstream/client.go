// Package upstream sends an attempt's request upstream and hands back the
// answer: its status, the headers the engine reads and a body that
// streams. Everything network-specific lives here: the clients and their
// connection pools, proxies, dialing, socket reads and the check of an
// idle connection before its reuse.
//
// http:// and https:// URLs without a proxy go through ccload's own
// HTTP/1.1 client (h1.go): it writes a request in one system call and
// keeps no goroutines per connection, which is most of what a proxy hop
// costs. Over TLS (tls.go) it offers only http/1.1 and keeps a pool of
// connections per host with resumed sessions: measured against net/http's
// h2 on an h2-offering upstream it relays about twice the requests per
// second at 0.6 times the CPU per request, and it keeps each stream on a
// connection of its own (docs/benchmarks.md has the numbers and the
// trade-offs). Upstreams behind a proxy go through net/http, which
// supports http, https and socks5 proxies and speaks h2 when offered. Both cancel an attempt the moment its
// context ends: a timer fired, the client hung up, or a write to a client
// that went away failed. net/http watches the context from the start; the
// HTTP/1.1 client bounds its wait for the headers with a deadline, has a
// hang-up close its connection under that wait (HeaderWait), and watches
// the context once it reads the body (h1Body.arm).
package upstream

import (
	"bytes"
	"context"
	"crypto/x509"
	"io"
	"net/http"
	"time"
)

// Request is one attempt's request, whichever client sends it.
type Request struct {
	// Ctx ends the attempt; its cause says why (a timer, the client
	// leaving), and a failure then returns that cause.
	Ctx   context.Context
	Proxy string // the channel's proxy URL, "" for none
	URL   string
	Body  []byte
	// Header sets the request headers (the client's forwardable ones, the
	// channel key, rewrite rules). The client frames the request itself:
	// Content-Length, Transfer-Encoding and Connection set here are not
	// sent by the HTTP/1.1 client.
	Header func(h HeaderSetter)
	// HeaderBy bounds the wait for the response headers (zero: none). The
	// attempt's timers end Ctx too; this lets the HTTP/1.1 client stop at
	// once without a goroutine watching Ctx.
	HeaderBy time.Time
	// Watch: Ctx may end before HeaderBy for a reason the wall clock does
	// not know (timers on an injected clock); the HTTP/1.1 client then
	// closes its connection when Ctx ends, as net/http watches it.
	Watch bool
	// Timers, when set, are the attempt's: the client arms them once it
	// waits in a way Ctx can interrupt. nil for a request whose Ctx has a
	// deadline of its own (a probe).
	Timers Timers
	// Lent, when set, is set once net/http takes Body, which the transport
	// may read after Do returns: the caller must not reuse the bytes then.
	Lent *bool
	// HeaderWait, when set, holds the HTTP/1.1 client's connection while
	// it waits for the answer headers, for a client hang-up to close.
	HeaderWait *HeaderWait
}

// HeaderSetter is what Request.Header needs of a request's headers:
// http.Header and *fasthttp.RequestHeader have it.
type HeaderSetter interface {
	Add(key, value string)
	Set(key, value string)
	Del(key string)
}

// Timers are an attempt's timers, which end its Ctx when the first byte
// or the whole answer is late. They run only while something waits that
// Ctx can interrupt.
type Timers interface {
	// Arm starts them (once; later calls do nothing).
	Arm()
	// HeaderTimedOut ends Ctx with the cause the timers would have given
	// had they run while the client waited for the headers until HeaderBy.
	HeaderTimedOut()
}

func arm(t Timers) {
	if t != nil {
		t.Arm()
	}
}

// Response is an upstream answer: status, the headers the engine reads,
// and the body, which the caller must close.
type Response struct {
	StatusCode int
	Header     interface{ Get(string) string }
	Body       io.ReadCloser
	Ctx        context.Context // the attempt's: context.Cause says why it ended
}

// SetupError is a failure before anything was sent.
type SetupError struct{ msg string }

func (e *SetupError) Error() string { return e.msg }

var (
	// ErrBadProxy: the channel's proxy URL does not parse.
	ErrBadProxy = &SetupError{"bad proxy setting"}
	// ErrBadURL: the upstream URL does not parse.
	ErrBadURL = &SetupError{"bad upstream URL"}
)

// Clients sends attempts: the HTTP/1.1 client for plain http:// without a
// proxy, and a net/http client per proxy setting for the rest.
type Clients struct {
	inject  http.RoundTripper
	proxies proxyClients
	h1      *h1Client
}

// New is the clients of a gateway. rt, when not nil, sends every request
// (tests force net/http with it); nil gives each proxy setting a tuned
// http.Transport and plain http:// the HTTP/1.1 client. roots are the
// certificate authorities both clients verify https:// upstreams and
// proxies against (nil: the system's); an injected rt brings its own.
func New(rt http.RoundTripper, roots *x509.CertPool) *Clients {
	h1 := newH1Client()
	h1.tls.roots = roots
	return &Clients{inject: rt, proxies: proxyClients{inject: rt, roots: roots, clients: map[string]*http.Client{}}, h1: h1}
}

// Roots are the certificate authorities New was given (nil: the
// system's), for the engine's other TLS connections to upstreams
// (WebSocket mode).
func (u *Clients) Roots() *x509.CertPool { return u.h1.tls.roots }

// Do sends one attempt and returns once the answer's headers are in. An
// error before any answer is a *SetupError, Ctx's cause when Ctx ended, or
// a transport error to classify.
func (u *Clients) Do(rq *Request) (*Response, error) {
	if u.inject == nil && rq.Proxy == "" {
		if t, ok := parseH1Target(rq.URL); ok {
			return u.h1.do(rq, t)
		}
	}
	arm(rq.Timers) // net/http watches Ctx from here on
	if rq.Lent != nil {
		*rq.Lent = true // the transport may read the body after RoundTrip returns
	}
	client, err := u.proxies.client(rq.Proxy)
	if err != nil {
		return nil, ErrBadProxy
	}
	hreq, err := http.NewRequestWithContext(rq.Ctx, http.MethodPost, rq.URL, bytes.NewReader(rq.Body))
	if err != nil {
		return nil, ErrBadURL
	}
	rq.Header(hreq.Header)
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, err
	}
	return &Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: resp.Body, Ctx: rq.Ctx}, nil
}

// Client returns the net/http client for a proxy setting ("" = direct),
// for other outbound fetches that should honour the same proxy settings
// (the price catalog). It has no timeout and follows no redirects:
// callers bound their requests with a context.
func (u *Clients) Client(proxy string) (*http.Client, error) { return u.proxies.client(proxy) }

// Keep drops the net/http clients of the proxy settings ("" = direct)
// keep refuses, and their idle connections: a config reload removed
// every channel that used them. A request still running on one finishes
// on its connection, which then closes; a later request for the setting
// makes a new client. The HTTP/1.1 client's pool is by address and needs
// no sweep: its idle connections close after h1IdleTimeout.
func (u *Clients) Keep(keep func(proxy string) bool) { u.proxies.keep(keep) }
