package account

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/internal/oauth"
)

// Facts about the Codex sign-in, from the Codex CLI's source (openai/codex,
// codex-rs/login/src): the issuer's token endpoint is <issuer>/oauth/token
// (server.rs exchange_code_for_tokens, form-encoded authorization_code
// grant with the PKCE verifier); the browser flow's authorize URL is
// <issuer>/oauth/authorize with response_type=code, S256 challenge, the
// scopes below, id_token_add_organizations=true and
// codex_cli_simplified_flow=true, redirecting to
// http://localhost:1455/auth/callback (server.rs build_authorize_url,
// DEFAULT_PORT); the device flow posts {client_id} to
// <issuer>/api/accounts/deviceauth/usercode, polls
// <issuer>/api/accounts/deviceauth/token with {device_auth_id, user_code}
// (403/404 while pending) and gets an authorization code and PKCE pair to
// exchange with redirect_uri <issuer>/deviceauth/callback; the user opens
// <issuer>/codex/device (device_code_auth.rs). The account id is the
// chatgpt_account_id inside the id token's "https://api.openai.com/auth"
// claim (server.rs jwt_auth_claims). A refresh posts JSON {client_id,
// grant_type: refresh_token, refresh_token, scope} to the token endpoint
// (auth/manager.rs).
const (
	CodexScope        = "openid profile email offline_access"
	codexRefreshScope = "openid profile email"
	CodexCallbackPort = 1455
	codexAuthClaim    = "https://api.openai.com/auth"
)

// CodexAuthorizeURL is the browser sign-in URL for a PKCE challenge.
func CodexAuthorizeURL(issuer, clientID, redirectURI, challenge, state string) string {
	q := url.Values{
		"response_type":              {"code"},
		"client_id":                  {clientID},
		"redirect_uri":               {redirectURI},
		"scope":                      {CodexScope},
		"code_challenge":             {challenge},
		"code_challenge_method":      {"S256"},
		"id_token_add_organizations": {"true"},
		"codex_cli_simplified_flow":  {"true"},
		"state":                      {state},
		"originator":                 {CodexOriginator},
	}
	return issuer + "/oauth/authorize?" + q.Encode()
}

// CodexExchange trades an authorization code for tokens.
func CodexExchange(ctx context.Context, hc *http.Client, issuer, clientID, redirectURI, verifier, code string) (oauth.Tokens, error) {
	return oauth.PostForm(ctx, hc, issuer+"/oauth/token", url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {redirectURI},
		"client_id":     {clientID},
		"code_verifier": {verifier},
	})
}

// CodexAccountID is the ChatGPT account id inside an id token (or an
// access token, which carries the same claim), "" when absent.
func CodexAccountID(jwt string) string {
	auth, _ := oauth.Claims(jwt)[codexAuthClaim].(map[string]any)
	id, _ := auth["chatgpt_account_id"].(string)
	return id
}

// FromTokens makes the credential a sign-in or refresh gave. prev keeps
// what the answer left out (a refresh may not rotate every token).
func FromTokens(provider string, t oauth.Tokens, prev Credential, now time.Time) Credential {
	c := prev
	c.AccessToken = t.AccessToken
	if t.RefreshToken != "" {
		c.RefreshToken = t.RefreshToken
	}
	if t.IDToken != "" {
		c.IDToken = t.IDToken
	}
	c.Expires, c.Issued = t.Expiry(now), now
	if provider != config.OAuthCodex {
		if sub, _ := oauth.Claims(c.IDToken)["sub"].(string); sub != "" {
			c.AccountID = sub
		}
	} else {
		if id := CodexAccountID(c.IDToken); id != "" {
			c.AccountID = id
		} else if id := CodexAccountID(c.AccessToken); id != "" && c.AccountID == "" {
			c.AccountID = id
		}
	}
	return c
}

// refresh runs the refresh grant for ch's provider.
func refresh(ctx context.Context, hc *http.Client, ch *config.Channel, c Credential) (oauth.Tokens, error) {
	switch ch.OAuth {
	case config.OAuthCodex:
		return oauth.PostJSON(ctx, hc, ch.OAuthIssuer+"/oauth/token", map[string]string{
			"client_id": ch.OAuthClientID, "grant_type": "refresh_token",
			"refresh_token": c.RefreshToken, "scope": codexRefreshScope,
		})
	default:
		md, err := oauth.Discover(ctx, hc, ch.OAuthIssuer)
		if err != nil {
			return oauth.Tokens{}, err
		}
		return oauth.PostForm(ctx, hc, md.TokenEndpoint, url.Values{
			"grant_type": {"refresh_token"}, "refresh_token": {c.RefreshToken}, "client_id": {ch.OAuthClientID},
		})
	}
}

// RefreshMargin is how long before expiry a token of this lifetime is
// renewed: a fifth of its life. A fixed margin fits no lifetime: five
// minutes would refresh a five-minute token at once and always, and a
// token of a few seconds needs its margin in milliseconds. A fifth keeps
// a renewal well before the end (time for a slow token endpoint and one
// retry) without throwing away most of each token's life.
func RefreshMargin(lifetime time.Duration) time.Duration {
	if lifetime <= 0 {
		return time.Minute
	}
	return lifetime / 5
}

// needsRefresh reports whether c should be renewed now.
func needsRefresh(c Credential, now time.Time) bool {
	if c.Expires.IsZero() || c.RefreshToken == "" {
		return false // unknown expiry, or nothing to renew with: wait for a 401
	}
	issued := c.Issued
	if issued.IsZero() || issued.After(c.Expires) {
		issued = c.Expires.Add(-time.Hour)
	}
	return !now.Before(c.Expires.Add(-RefreshMargin(c.Expires.Sub(issued))))
}

// Fingerprint shows the start and end of an id, never all of it.
func Fingerprint(s string) string {
	if s == "" {
		return ""
	}
	return config.Fingerprint(s)
}
