package config

import (
	"net/netip"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ServerLimits bound what one client connection may hold: a
// client that sends half a header, trickles a body or stops reading a
// stream is cut after the matching timeout, and no address may hold more
// than its share of connections. A zero duration turns that timeout off.
type ServerLimits struct {
	// HeaderTimeout bounds the wait for a new connection's first request
	// line and headers (and an idle keep-alive connection's next ones).
	HeaderTimeout Duration
	// BodyTimeout bounds reading the request body once headers are in.
	BodyTimeout Duration
	// StreamWriteTimeout bounds each write of a streamed response: a client
	// that stops reading is cut after it, its slots freed and the upstream
	// request cancelled.
	StreamWriteTimeout Duration
	// MaxConns is the most connections served at once.
	MaxConns int
	// MaxConnsPerIP is the most connections from one peer address; 0 = no
	// limit. A peer in TrustedProxies is not counted (engine/server.go):
	// a load balancer funnels every client into its one address.
	MaxConnsPerIP int
}

// DefaultServerLimits are the limits when the file sets none.
var DefaultServerLimits = ServerLimits{
	HeaderTimeout:      Duration(10 * time.Second),
	BodyTimeout:        Duration(60 * time.Second),
	StreamWriteTimeout: Duration(60 * time.Second),
	MaxConns:           10000,
	MaxConnsPerIP:      256,
}

// decodeTrustedProxies reads server.trusted_proxies: CIDRs ("10.0.0.0/8")
// or single addresses ("127.0.0.1", taken as /32 or /128).
func decodeTrustedProxies(d *decoder, n *yaml.Node, p string, s *Server) {
	var out []netip.Prefix
	d.seq(n, p, func(_ int, item *yaml.Node, ip string) {
		v, ok := d.str(item, ip)
		if !ok {
			return
		}
		pf, err := parseProxy(v)
		if err != nil {
			d.addf(item, ip, `want a CIDR like "10.0.0.0/8" or an address like "127.0.0.1", got %q`, v)
			return
		}
		out = append(out, pf)
	})
	s.TrustedProxies = out
}

func parseProxy(v string) (netip.Prefix, error) {
	v = strings.TrimSpace(v)
	if strings.Contains(v, "/") {
		pf, err := netip.ParsePrefix(v)
		return pf.Masked(), err
	}
	a, err := netip.ParseAddr(v)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// Trusts reports whether ip (a peer address) is one of
// server.trusted_proxies.
func (s *Server) Trusts(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range s.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
