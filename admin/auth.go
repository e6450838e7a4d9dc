package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/engine"
)

// Admin authentication: POST /admin/login with the admin password sets a
// session cookie; scripts and the CLI send the password as a Bearer token
// instead. Wrong passwords, by either route, count against the client IP:
// loginAttempts failures within loginWindow answer 429 until the window
// ends, so the password cannot be guessed at speed.
const (
	cookieName    = "ccload_session"
	loginAttempts = 5
	loginWindow   = time.Minute
)

// authorize accepts a valid session cookie or the admin password as a
// Bearer token.
func (s *Server) authorize(ctx *fasthttp.RequestCtx) error {
	now := s.clock.Now()
	if id := ctx.Request.Header.Cookie(cookieName); len(id) > 0 && s.sessions.valid(string(id), now, s.passwordSum()) {
		return nil
	}
	pw, ok := bearer(string(ctx.Request.Header.Peek("Authorization")))
	if !ok {
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="ccload admin"`)
		return &httpError{Status: fasthttp.StatusUnauthorized,
			Msg: "admin login required: POST /admin/login, or send Authorization: Bearer <admin_password>"}
	}
	return s.checkAttempt(ctx, pw, now)
}

// MayObserve reports whether the request may read /metrics and the
// details of /health: it carries server.metrics_token as a Bearer token,
// or passes authorize. A wrong token counts as a wrong password, so these
// endpoints guess no faster than the login.
func (s *Server) MayObserve(ctx *fasthttp.RequestCtx) bool {
	if tok, ok := bearer(string(ctx.Request.Header.Peek("Authorization"))); ok && s.metricsTokenOK(tok) {
		return true
	}
	return s.authorize(ctx) == nil
}

// metricsTokenOK compares in constant time; an unset token accepts nothing.
func (s *Server) metricsTokenOK(tok string) bool {
	want := s.cfg.Current().Server.MetricsToken.Reveal()
	if want == "" || tok == "" {
		return false
	}
	a, b := sha256.Sum256([]byte(tok)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// checkAttempt checks a password for the client, counting failures.
func (s *Server) checkAttempt(ctx *fasthttp.RequestCtx, pw string, now time.Time) error {
	ip := limiterKey(s.clientIP(ctx))
	if wait, blocked := s.limiter.blocked(ip, now); blocked {
		secs := int(wait.Round(time.Second) / time.Second)
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(max(secs, 1)))
		return &httpError{Status: fasthttp.StatusTooManyRequests,
			Msg: "too many wrong admin passwords from this address; try again in " + strconv.Itoa(max(secs, 1)) + "s"}
	}
	if s.passwordOK(pw) {
		s.limiter.reset(ip)
		return nil
	}
	s.limiter.fail(ip, now)
	ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="ccload admin"`)
	return &httpError{Status: fasthttp.StatusUnauthorized, Msg: "wrong admin password"}
}

// passwordOK compares in constant time; hashing first also hides the length.
// An empty admin_password accepts nothing.
func (s *Server) passwordOK(pw string) bool {
	want := s.cfg.Current().Server.AdminPassword.Reveal()
	if want == "" || pw == "" {
		return false
	}
	a, b := sha256.Sum256([]byte(pw)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

func bearer(h string) (string, bool) {
	const prefix = "bearer "
	if len(h) > len(prefix) && strings.EqualFold(h[:len(prefix)], prefix) {
		return strings.TrimSpace(h[len(prefix):]), true
	}
	return "", false
}

// login is POST /admin/login {"password": "..."}.
func (s *Server) login(ctx *fasthttp.RequestCtx) error {
	var req adminapi.LoginRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	now := s.clock.Now()
	if err := s.checkAttempt(ctx, req.Password, now); err != nil {
		return err
	}
	id, exp, err := s.sessions.create(now, s.passwordSum())
	if err != nil {
		s.log.Error("admin login: could not store the session", "err", err)
		return &httpError{Status: fasthttp.StatusServiceUnavailable,
			Msg: "could not store the session (database unreachable?); the admin password as a Bearer token still works"}
	}
	var c fasthttp.Cookie
	c.SetKey(cookieName)
	c.SetValue(id)
	c.SetPath("/")
	c.SetHTTPOnly(true)
	c.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	c.SetSecure(engine.IsHTTPS(ctx, &s.cfg.Current().Server))
	c.SetExpire(exp)
	c.SetMaxAge(int(exp.Sub(now) / time.Second))
	ctx.Response.Header.SetCookie(&c)
	return writeJSON(ctx, fasthttp.StatusOK, adminapi.LoginResponse{OK: true, ExpiresAt: exp})
}

// logout is POST /admin/logout: it ends the caller's session, if any, and
// clears the cookie. It needs no session, so it cannot fail.
func (s *Server) logout(ctx *fasthttp.RequestCtx) error {
	if id := ctx.Request.Header.Cookie(cookieName); len(id) > 0 {
		s.sessions.remove(string(id), s.clock.Now())
	}
	var c fasthttp.Cookie
	c.SetKey(cookieName)
	c.SetValue("")
	c.SetPath("/")
	c.SetHTTPOnly(true)
	c.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	c.SetExpire(fasthttp.CookieExpireDelete)
	ctx.Response.Header.SetCookie(&c)
	return writeJSON(ctx, fasthttp.StatusOK, map[string]bool{"ok": true})
}

// limiterKey is the unit the limiter counts: an IPv4 address, or the /64
// of an IPv6 one. A single IPv6 host is routinely given a whole /64 and
// may pick any address in it, so counting exact addresses would give a
// guesser 2^64 fresh allowances.
func limiterKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || a.Unmap().Is4() {
		return ip
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// limiter counts failed password attempts per client (limiterKey) in fixed
// windows.
type limiter struct {
	max    int
	window time.Duration
	mu     sync.Mutex
	m      map[string]*attempts
}

type attempts struct {
	start time.Time
	n     int
}

func newLimiter(max int, window time.Duration) *limiter {
	return &limiter{max: max, window: window, m: map[string]*attempts{}}
}

// blocked reports whether ip used up its attempts, and for how long.
func (l *limiter) blocked(ip string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.m[ip]
	if a == nil || now.Sub(a.start) >= l.window {
		return 0, false
	}
	if a.n >= l.max {
		return a.start.Add(l.window).Sub(now), true
	}
	return 0, false
}

func (l *limiter) fail(ip string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.m[ip]
	if a == nil || now.Sub(a.start) >= l.window {
		if len(l.m) >= 4096 {
			for k, old := range l.m {
				if now.Sub(old.start) >= l.window {
					delete(l.m, k)
				}
			}
		}
		a = &attempts{start: now}
		l.m[ip] = a
	}
	a.n++
}

func (l *limiter) reset(ip string) {
	l.mu.Lock()
	delete(l.m, ip)
	l.mu.Unlock()
}
