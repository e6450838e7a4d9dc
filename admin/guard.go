package admin

import (
	"crypto/sha256"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/engine"
)

// checkPost guards state-changing admin calls against cross-site requests.
// Only a POST carrying the session cookie, a credential the
// browser adds by itself, is checked; one with the password as a Bearer
// token (scripts, the CLI) or no credential at all passes. A cookie POST
// must be JSON, which a cross-site form cannot send without a CORS
// preflight that ccload never answers, and must name this origin in Origin
// or Sec-Fetch-Site (every browser sends one; neither may name another).
func (s *Server) checkPost(ctx *fasthttp.RequestCtx) error {
	if _, ok := bearer(string(ctx.Request.Header.Peek("Authorization"))); ok {
		return nil
	}
	if len(ctx.Request.Header.Cookie(cookieName)) == 0 {
		return nil
	}
	mt, _, _ := strings.Cut(string(ctx.Request.Header.ContentType()), ";")
	if !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		return &httpError{Status: fasthttp.StatusUnsupportedMediaType, Msg: "admin POSTs need Content-Type: application/json"}
	}
	origin := string(ctx.Request.Header.Peek("Origin"))
	site := strings.ToLower(string(ctx.Request.Header.Peek("Sec-Fetch-Site")))
	if origin != "" && !strings.EqualFold(origin, engine.Origin(ctx, &s.cfg.Current().Server)) {
		return &httpError{Status: fasthttp.StatusForbidden, Msg: "cross-origin admin call refused"}
	}
	if site != "" && site != "same-origin" && site != "none" {
		return &httpError{Status: fasthttp.StatusForbidden, Msg: "cross-site admin call refused (Sec-Fetch-Site: " + site + ")"}
	}
	if origin == "" && site == "" {
		return &httpError{Status: fasthttp.StatusForbidden, Msg: "a POST with the session cookie needs a same-origin Origin or Sec-Fetch-Site header"}
	}
	return nil
}

// passwordSum is the sha256 of the admin password in force; sessions opened
// under another one are no longer valid.
func (s *Server) passwordSum() [32]byte {
	return sha256.Sum256([]byte(s.cfg.Current().Server.AdminPassword.Reveal()))
}

// clientIP is the caller's address for the login limiter:
// server.trusted_proxies decides whether X-Forwarded-For is believed.
func (s *Server) clientIP(ctx *fasthttp.RequestCtx) string {
	if ip := engine.ClientIP(ctx, &s.cfg.Current().Server); ip != "" {
		return ip
	}
	return "unknown"
}
