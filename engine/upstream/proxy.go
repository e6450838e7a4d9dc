package upstream

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// proxyClients are the net/http clients, one per proxy setting, each with
// its own transport and so its own idle connections.
type proxyClients struct {
	inject  http.RoundTripper
	roots   *x509.CertPool // nil: the system's
	mu      sync.Mutex
	clients map[string]*http.Client // proxy URL ("" = direct) -> client
}

// client returns the client for a proxy setting, made on first use.
func (p *proxyClients) client(proxy string) (*http.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[proxy]; ok {
		return c, nil
	}
	rt := p.inject
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
		if p.roots != nil {
			t.TLSClientConfig = &tls.Config{RootCAs: p.roots}
		}
		if proxy != "" {
			u, err := url.Parse(proxy)
			if err != nil {
				return nil, err
			}
			t.Proxy = http.ProxyURL(u)
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
	p.clients[proxy] = c
	return c, nil
}

// keep drops the clients of the proxy settings keep refuses, closing
// their idle connections: a reload removed the channels that used them.
// An injected RoundTripper is shared by every client and stays open.
func (p *proxyClients) keep(keep func(proxy string) bool) {
	var dropped []*http.Client
	p.mu.Lock()
	for proxy, c := range p.clients {
		if !keep(proxy) {
			delete(p.clients, proxy)
			dropped = append(dropped, c)
		}
	}
	p.mu.Unlock()
	if p.inject != nil {
		return
	}
	for _, c := range dropped {
		c.CloseIdleConnections()
	}
}
