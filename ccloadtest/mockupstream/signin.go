package mockupstream

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// SignIn is a mock OAuth sign-in server in the shape of OpenAI's
// (auth.openai.com, as the Codex CLI uses it) with an RFC 8628 device
// endpoint beside it (for xAI's device sign-in):
//
//	GET  /.well-known/openid-configuration   discovery (RFC 8414 fields)
//	GET  /oauth/authorize                    approves at once: 302 to redirect_uri?code=…&state=…
//	POST /oauth/token                        authorization_code (PKCE S256 checked), refresh_token,
//	                                         urn:ietf:params:oauth:grant-type:device_code; form or JSON
//	POST /oauth/device/code                  RFC 8628 device authorization
//	POST /api/accounts/deviceauth/usercode   Codex device code: {client_id} -> {device_auth_id, user_code, interval}
//	POST /api/accounts/deviceauth/token      403 while pending, then {authorization_code, code_challenge, code_verifier}
//
// Access tokens are JWT-shaped (unsigned) and live AccessTTL; refresh
// tokens are single-use and rotate on every refresh: a used one answers
// refresh_token_reused, one of a revoked account refresh_token_invalidated,
// both terminal. id tokens carry the account id in the
// "https://api.openai.com/auth" claim, as OpenAI's do.
type SignIn struct {
	// AccessTTL is the lifetime of access tokens (default 1h).
	AccessTTL time.Duration
	// Account is the account id the next authorization approves (default
	// "acct-1"); a login_hint query parameter overrides it.
	Account string
	// PendingPolls is how many device-token polls answer "pending" before
	// the sign-in is approved (default 1).
	PendingPolls int
	// RefreshDelay holds every refresh answer this long, so concurrent
	// refreshes overlap (tests of single-flight).
	RefreshDelay time.Duration
	// OnRefresh, when set, runs as each refresh grant arrives, before it
	// is answered: a test can hold a refresh in flight.
	OnRefresh func()
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu       sync.Mutex
	codes    map[string]authCode
	refresh  map[string]*refreshToken
	access   map[string]accessToken
	devices  map[string]*device
	revoked  map[string]bool
	counts   map[string]int // refresh grants answered per account
	reused   int
	issuer   string
	sequence int
}

type authCode struct{ account, challenge, redirect string }

type refreshToken struct {
	account string
	used    bool
}

type accessToken struct {
	account string
	expires time.Time
}

type device struct {
	account  string
	polls    int
	userCode string
}

func (s *SignIn) init(r *http.Request) {
	if s.codes == nil {
		s.codes, s.refresh, s.access = map[string]authCode{}, map[string]*refreshToken{}, map[string]accessToken{}
		s.devices, s.revoked, s.counts = map[string]*device{}, map[string]bool{}, map[string]int{}
	}
	if s.issuer == "" && r != nil {
		s.issuer = "http://" + r.Host
	}
}

func (s *SignIn) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *SignIn) ttl() time.Duration {
	if s.AccessTTL > 0 {
		return s.AccessTTL
	}
	return time.Hour
}

// ServeHTTP implements http.Handler.
func (s *SignIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.init(r)
	s.mu.Unlock()
	switch r.URL.Path {
	case "/.well-known/openid-configuration", "/.well-known/oauth-authorization-server":
		iss := "http://" + r.Host
		writeJSONValue(w, 200, map[string]string{
			"issuer": iss, "authorization_endpoint": iss + "/oauth/authorize", "token_endpoint": iss + "/oauth/token",
			"device_authorization_endpoint": iss + "/oauth/device/code",
		})
	case "/oauth/authorize":
		s.authorize(w, r)
	case "/oauth/token":
		s.token(w, r)
	case "/oauth/device/code":
		s.deviceCode(w, r)
	case "/api/accounts/deviceauth/usercode":
		s.codexUserCode(w, r)
	case "/api/accounts/deviceauth/token":
		s.codexDeviceToken(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *SignIn) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" ||
		q.Get("redirect_uri") == "" || q.Get("client_id") == "" {
		http.Error(w, "mock sign-in: want response_type=code, client_id, redirect_uri and an S256 code_challenge", 400)
		return
	}
	acct := q.Get("login_hint")
	s.mu.Lock()
	if acct == "" {
		acct = s.account()
	}
	code := randomID("code_")
	s.codes[code] = authCode{account: acct, challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
	s.mu.Unlock()
	to, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "mock sign-in: bad redirect_uri", 400)
		return
	}
	tq := to.Query()
	tq.Set("code", code)
	tq.Set("state", q.Get("state"))
	to.RawQuery = tq.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

func (s *SignIn) account() string {
	if s.Account != "" {
		return s.Account
	}
	return "acct-1"
}

// params reads a form or JSON body into a flat map.
func params(r *http.Request) map[string]string {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	out := map[string]string{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(b, &out)
		return out
	}
	v, _ := url.ParseQuery(string(b))
	for k := range v {
		out[k] = v.Get(k)
	}
	return out
}

func oauthError(w http.ResponseWriter, status int, code, msg string) {
	// OpenAI's token endpoint nests the code: {"error": {"code": ...}}.
	writeJSONValue(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg, "type": "invalid_request_error"}})
}

func (s *SignIn) token(w http.ResponseWriter, r *http.Request) {
	p := params(r)
	if p["client_id"] == "" {
		oauthError(w, 400, "invalid_client", "client_id is required")
		return
	}
	switch p["grant_type"] {
	case "authorization_code":
		s.mu.Lock()
		c, ok := s.codes[p["code"]]
		delete(s.codes, p["code"])
		s.mu.Unlock()
		sum := sha256.Sum256([]byte(p["code_verifier"]))
		switch {
		case !ok:
			oauthError(w, 400, "invalid_grant", "unknown or used authorization code")
		case base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge:
			oauthError(w, 400, "invalid_grant", "code_verifier does not match the code_challenge")
		case p["redirect_uri"] != c.redirect:
			oauthError(w, 400, "invalid_grant", "redirect_uri differs from the authorization request's")
		default:
			writeJSONValue(w, 200, s.issue(c.account, true))
		}
	case "refresh_token":
		if s.OnRefresh != nil {
			s.OnRefresh()
		}
		if s.RefreshDelay > 0 {
			time.Sleep(s.RefreshDelay)
		}
		s.mu.Lock()
		rt := s.refresh[p["refresh_token"]]
		switch {
		case rt == nil:
			s.mu.Unlock()
			oauthError(w, 401, "refresh_token_expired", "unknown refresh token")
		case s.revoked[rt.account]:
			s.mu.Unlock()
			oauthError(w, 401, "refresh_token_invalidated", "Your refresh token has been invalidated. Please sign in again.")
		case rt.used:
			s.reused++
			s.mu.Unlock()
			oauthError(w, 401, "refresh_token_reused", "Your refresh token has already been used to generate a new access token. Please try signing in again.")
		default:
			rt.used = true
			s.counts[rt.account]++
			s.mu.Unlock()
			writeJSONValue(w, 200, s.issue(rt.account, true))
		}
	case "urn:ietf:params:oauth:grant-type:device_code":
		s.mu.Lock()
		d := s.devices[p["device_code"]]
		if d != nil {
			d.polls++
		}
		s.mu.Unlock()
		switch {
		case d == nil:
			oauthError(w, 400, "expired_token", "unknown device code")
		case d.polls <= max(s.PendingPolls, 1):
			writeJSONValue(w, 400, map[string]string{"error": "authorization_pending"})
		default:
			s.mu.Lock()
			delete(s.devices, p["device_code"])
			s.mu.Unlock()
			writeJSONValue(w, 200, s.issue(d.account, true))
		}
	default:
		oauthError(w, 400, "unsupported_grant_type", "grant_type "+p["grant_type"])
	}
}

// issue makes a token set for account.
func (s *SignIn) issue(account string, withRefresh bool) map[string]any {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sequence++
	exp := now.Add(s.ttl())
	claims := map[string]any{"sub": account, "iat": now.Unix(), "exp": exp.Unix(), "jti": randomID(""),
		"https://api.openai.com/auth": map[string]any{"chatgpt_account_id": account, "chatgpt_plan_type": "plus"}}
	access := fakeJWT(claims)
	s.access[access] = accessToken{account: account, expires: exp}
	out := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int64(s.ttl() / time.Second),
		"id_token": fakeJWT(map[string]any{"sub": account, "email": account + "@example.com", "iat": now.Unix(), "exp": exp.Unix(),
			"https://api.openai.com/auth": map[string]any{"chatgpt_account_id": account}})}
	if s.ttl() < time.Second {
		delete(out, "expires_in") // the exp claim says it
	}
	if withRefresh {
		rt := randomID("rt_")
		s.refresh[rt] = &refreshToken{account: account}
		out["refresh_token"] = rt
	}
	return out
}

func (s *SignIn) deviceCode(w http.ResponseWriter, r *http.Request) {
	p := params(r)
	if p["client_id"] == "" {
		oauthError(w, 400, "invalid_client", "client_id is required")
		return
	}
	dc, uc := randomID("dc_"), strings.ToUpper(randomID("")[:8])
	s.mu.Lock()
	s.devices[dc] = &device{account: s.account(), userCode: uc}
	iss := s.issuer
	s.mu.Unlock()
	writeJSONValue(w, 200, map[string]any{"device_code": dc, "user_code": uc, "verification_uri": iss + "/device",
		"verification_uri_complete": iss + "/device?user_code=" + uc, "expires_in": 600, "interval": 1})
}

func (s *SignIn) codexUserCode(w http.ResponseWriter, r *http.Request) {
	p := params(r)
	if p["client_id"] == "" {
		http.Error(w, "client_id required", 400)
		return
	}
	id, uc := randomID("dev_"), strings.ToUpper(randomID("")[:8])
	s.mu.Lock()
	s.devices[id] = &device{account: s.account(), userCode: uc}
	s.mu.Unlock()
	// The interval is a string in OpenAI's answer (device_code_auth.rs
	// parses it from one).
	writeJSONValue(w, 200, map[string]string{"device_auth_id": id, "user_code": uc, "interval": "0"})
}

func (s *SignIn) codexDeviceToken(w http.ResponseWriter, r *http.Request) {
	p := params(r)
	s.mu.Lock()
	d := s.devices[p["device_auth_id"]]
	if d == nil || d.userCode != p["user_code"] {
		s.mu.Unlock()
		http.Error(w, "unknown device", 404)
		return
	}
	d.polls++
	if d.polls <= max(s.PendingPolls, 1) {
		s.mu.Unlock()
		http.Error(w, "pending", http.StatusForbidden)
		return
	}
	delete(s.devices, p["device_auth_id"])
	verifier := randomID("v_") + randomID("")
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	code := randomID("code_")
	s.codes[code] = authCode{account: d.account, challenge: challenge, redirect: s.issuer + "/deviceauth/callback"}
	s.mu.Unlock()
	writeJSONValue(w, 200, map[string]string{"authorization_code": code, "code_challenge": challenge, "code_verifier": verifier})
}

// Issue signs account in without a browser and returns its tokens
// (access_token, refresh_token, id_token), e.g. to write a Codex CLI
// auth.json for an import test.
func (s *SignIn) Issue(account string) (access, refresh, id string) {
	s.mu.Lock()
	s.init(nil)
	s.mu.Unlock()
	t := s.issue(account, true)
	return t["access_token"].(string), t["refresh_token"].(string), t["id_token"].(string)
}

// Revoke invalidates every refresh token of account (a banned or signed
// out account): its next refresh answers refresh_token_invalidated.
func (s *SignIn) Revoke(account string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init(nil)
	s.revoked[account] = true
}

// ExpireAccess ends every access token of account now, as a provider
// that shortened or revoked a session does: the next use answers 401.
func (s *SignIn) ExpireAccess(account string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init(nil)
	for k, a := range s.access {
		if a.account == account {
			a.expires = s.now().Add(-time.Second)
			s.access[k] = a
		}
	}
}

// Refreshes is how many refresh grants succeeded for account.
func (s *SignIn) Refreshes(account string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[account]
}

// Reused is how many refresh grants presented a used refresh token.
func (s *SignIn) Reused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reused
}

// Check reports the account of a valid access token; expired says the
// token is known but past its expiry.
func (s *SignIn) Check(access string) (account string, ok, expired bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init(nil)
	a, found := s.access[access]
	if !found {
		return "", false, false
	}
	if !s.now().Before(a.expires) {
		return a.account, false, true
	}
	return a.account, true, false
}

func fakeJWT(claims map[string]any) string {
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	b, _ := json.Marshal(claims)
	return h + "." + base64.RawURLEncoding.EncodeToString(b) + ".mock"
}

func randomID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func writeJSONValue(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint("mock sign-in: ", err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
