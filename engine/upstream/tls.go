package upstream

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"sync"
)

// h1TLSSessions is how many TLS sessions the HTTP/1.1 client keeps to
// resume, across hosts: a new connection to a host it talked to resumes
// instead of a full handshake with certificate verification.
const h1TLSSessions = 1024

// h1TLS is the HTTP/1.1 client's TLS setup for https:// upstreams: per
// host:port a configuration that verifies the host's name against the
// system roots (or roots, in tests) and offers only http/1.1 in ALPN, and
// one session cache for all of them.
type h1TLS struct {
	mu       sync.Mutex
	configs  map[string]*tls.Config // by host:port
	sessions tls.ClientSessionCache
	roots    *x509.CertPool // nil: the system's (SSL_CERT_FILE on Linux)
}

func (t *h1TLS) config(addr string) *tls.Config {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.configs[addr]; ok {
		return c
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if t.sessions == nil {
		t.sessions = tls.NewLRUClientSessionCache(h1TLSSessions)
	}
	if t.configs == nil {
		t.configs = map[string]*tls.Config{}
	}
	c := &tls.Config{ServerName: host, NextProtos: []string{"http/1.1"}, ClientSessionCache: t.sessions, RootCAs: t.roots}
	t.configs[addr] = c
	return c
}
