package config

import (
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ccload/ccload/protocol"
)

// Subscription providers a channel may sign accounts in with (`oauth:`).
const (
	OAuthCodex = "codex" // ChatGPT sign-in, served by the Codex backend
	OAuthXAI   = "xai"   // xAI sign-in (device code, RFC 8628)
)

// AccountKeyPrefix starts the key placeholder an oauth channel holds for
// each of its accounts. Key selection, cooldowns and failover then treat an
// account exactly as a key; the placeholder itself is never sent upstream
// (the engine swaps in the account's access token).
const AccountKeyPrefix = "account:"

// Provider defaults: where the Codex CLI signs in and what it talks to
// (codex-rs/login/src/server.rs DEFAULT_ISSUER; the backend base URL the
// CLI uses for ChatGPT sign-ins is https://chatgpt.com/backend-api/codex,
// whose Responses endpoint is <base>/responses).
var oauthDefaults = map[string]struct {
	Issuer, ClientID, URL string
	Protocols             []protocol.Family
}{
	OAuthCodex: {"https://auth.openai.com", "app_EMoamEEZ73f0CkXaXp7hrann", "https://chatgpt.com/backend-api/codex", []protocol.Family{protocol.Responses}},
	// xAI publishes no client id or issuer for third-party device sign-in
	// that we could verify: the issuer's OpenID discovery document names
	// the endpoints, and oauth_client_id must be set.
	OAuthXAI: {"https://auth.x.ai", "", "https://api.x.ai", []protocol.Family{protocol.OpenAI}},
}

// AccountKey is the placeholder key of account on an oauth channel.
func AccountKey(account string) Secret { return Secret(AccountKeyPrefix + account) }

// AccountOf is the account a key placeholder stands for, or false for a
// real key.
func AccountOf(k Secret) (string, bool) { return strings.CutPrefix(k.Reveal(), AccountKeyPrefix) }

var accountName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$`)

func decodeOAuth(d *decoder, n *yaml.Node, p string, c *Channel) {
	switch v, ok := d.str(n, p); {
	case !ok:
	case v == OAuthCodex || v == OAuthXAI:
		c.OAuth = v
	default:
		d.addf(n, p, "unknown oauth provider %q (want codex or xai)", v)
	}
}

func decodeAccounts(d *decoder, n *yaml.Node, p string, c *Channel) {
	d.seq(n, p, func(_ int, item *yaml.Node, ip string) {
		v, ok := d.str(item, ip)
		switch {
		case !ok:
		case !accountName.MatchString(v):
			d.addf(item, ip, "account name %q: use letters, digits and . _ @ + - (at most 128)", v)
		case slices.Contains(c.Accounts, v):
			d.addf(item, ip, "account %q listed twice", v)
		default:
			c.Accounts = append(c.Accounts, v)
		}
	})
}

// finishOAuth checks an oauth channel and fills what it implies: the
// provider's default issuer, client id and URL, the Codex Responses
// endpoint, and one key placeholder per account. It reports whether the
// channel has its credentials (so the "needs a key" check is skipped).
func finishOAuth(d *decoder, item *yaml.Node, ip string, seen map[string]*yaml.Node, c *Channel) bool {
	if c.OAuth == "" {
		for _, k := range []string{"accounts", "oauth_issuer", "oauth_client_id"} {
			if !isNull(d.resolve(seen[k])) {
				d.addf(seen[k], join(ip, k), "%s needs oauth: codex or xai", k)
			}
		}
		return false
	}
	def := oauthDefaults[c.OAuth]
	if len(c.Keys) > 0 {
		d.addf(seen["keys"], join(ip, "keys"), "an oauth channel signs accounts in (accounts: [...]); it takes no keys")
	}
	if len(c.Accounts) == 0 && c.Enabled {
		d.addf(d.orNode(seen["accounts"], item), ip, "an oauth channel needs at least one account (accounts: [alice])")
	}
	if c.OAuthIssuer == "" {
		c.OAuthIssuer = def.Issuer
	} else if msg := checkURL(c.OAuthIssuer, "http", "https"); msg != "" {
		d.addf(seen["oauth_issuer"], join(ip, "oauth_issuer"), "%s", msg)
	}
	c.OAuthIssuer = strings.TrimRight(c.OAuthIssuer, "/")
	if c.OAuthClientID == "" {
		c.OAuthClientID = def.ClientID
	}
	if c.OAuthClientID == "" && c.Enabled {
		d.addf(d.orNode(seen["oauth_client_id"], item), ip, "oauth: %s needs oauth_client_id (the OAuth client registered for device sign-in)", c.OAuth)
	}
	if len(c.URLs) == 0 {
		c.URLs = []URL{{URL: def.URL}}
	}
	for i := range c.URLs {
		u := &c.URLs[i]
		if len(u.Protocols) == 0 {
			u.Protocols = slices.Clone(def.Protocols)
		}
		if c.OAuth == OAuthCodex && !u.Exact {
			// The Codex backend serves Responses at <base>/responses, not
			// at /v1/responses.
			u.URL = strings.TrimRight(u.URL, "/") + "/responses"
			u.Exact = true
		}
	}
	c.Keys = make([]Secret, len(c.Accounts))
	for i, a := range c.Accounts {
		c.Keys[i] = AccountKey(a)
	}
	return true
}

// ParseSecretKey decodes server.secret_key: 32 bytes written as 64 hex
// characters or in standard or URL-safe base64.
func ParseSecretKey(s string) ([]byte, bool) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b, true
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
			return b, true
		}
	}
	return nil, false
}

func decodeSecretKey(d *decoder, n *yaml.Node, p string, s *Server) {
	v, ok := d.str(n, p)
	if !ok || v == "" {
		return
	}
	if _, ok := ParseSecretKey(v); !ok {
		d.addf(n, p, "want 32 random bytes as 64 hex characters or base64 (openssl rand -hex 32)")
		return
	}
	s.SecretKey = Secret(v)
}

// checkSecretKey: stored credentials are encrypted with server.secret_key,
// so an oauth channel cannot work without one.
func (d *decoder) checkSecretKey(s *Snapshot) {
	if s.Server.SecretKey != "" {
		return
	}
	for i, c := range s.Channels {
		if c.OAuth != "" {
			d.addf(d.oauthNodes[c], index("channels", i)+".oauth",
				"server.secret_key is required once any oauth channel exists: it encrypts the stored credentials (openssl rand -hex 32)")
			return
		}
	}
}

// HasOAuth reports whether any channel signs accounts in.
func (s *Snapshot) HasOAuth() bool {
	return slices.ContainsFunc(s.Channels, func(c *Channel) bool { return c.OAuth != "" })
}
