package engine

import (
	"net"
	"net/netip"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
)

// ClientIP is the address of the client behind ctx: the peer's, or, when
// the peer is one of server.trusted_proxies, the rightmost address of
// X-Forwarded-For that is not itself a trusted proxy (the one the first
// trusted proxy saw). Without trusted_proxies the header is ignored: any
// client can write it. "" when unknown.
func ClientIP(ctx *fasthttp.RequestCtx, srv *config.Server) string {
	peer, ok := peerAddr(ctx)
	if !ok {
		return ""
	}
	if !srv.Trusts(peer) {
		return peer.String()
	}
	hops := strings.Split(string(ctx.Request.Header.Peek("X-Forwarded-For")), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if !srv.Trusts(a) {
			return a.Unmap().String()
		}
	}
	return peer.String()
}

// IsHTTPS reports whether the client reached ccload over TLS: directly, or
// through a trusted proxy that says so in X-Forwarded-Proto.
func IsHTTPS(ctx *fasthttp.RequestCtx, srv *config.Server) bool {
	if ctx.IsTLS() {
		return true
	}
	peer, ok := peerAddr(ctx)
	return ok && srv.Trusts(peer) && strings.EqualFold(strings.TrimSpace(firstValue(ctx.Request.Header.Peek("X-Forwarded-Proto"))), "https")
}

// Origin is the scheme://host the client used to reach ccload (host from
// X-Forwarded-Host when a trusted proxy sets it), to compare with a
// browser's Origin header.
func Origin(ctx *fasthttp.RequestCtx, srv *config.Server) string {
	scheme := "http"
	if IsHTTPS(ctx, srv) {
		scheme = "https"
	}
	host := string(ctx.Host())
	if peer, ok := peerAddr(ctx); ok && srv.Trusts(peer) {
		if h := strings.TrimSpace(firstValue(ctx.Request.Header.Peek("X-Forwarded-Host"))); h != "" {
			host = h
		}
	}
	return scheme + "://" + strings.ToLower(host)
}

func firstValue(v []byte) string {
	s, _, _ := strings.Cut(string(v), ",")
	return s
}

func peerAddr(ctx *fasthttp.RequestCtx) (netip.Addr, bool) {
	ip := ctx.RemoteIP()
	if ip == nil || ip.Equal(net.IPv4zero) {
		return netip.Addr{}, false
	}
	a, ok := netip.AddrFromSlice(ip)
	return a.Unmap(), ok
}
