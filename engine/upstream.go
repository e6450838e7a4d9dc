package engine

import (
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// upstreams holds one HTTP client per proxy setting. Upstream calls use
// net/http rather than the fasthttp client: it cancels a request the
// moment its context ends, speaks HTTP/2 to the providers, and supports
// http, https and socks5 proxies without extra dialers. A client that
// disconnects ends that context only once its stream is committed (relay's
// next write fails); before that fasthttp does not tell the handler, so the
// attempt runs until its answer or its timeouts.
type upstreams struct {
	inject  http.RoundTripper
	mu      sync.Mutex
	clients map[string]*http.Client // proxy URL ("" = direct) -> client
}

func newUpstreams(rt http.RoundTripper) *upstreams {
	return &upstreams{inject: rt, clients: map[string]*http.Client{}}
}

// client returns the client for a channel's proxy setting.
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
