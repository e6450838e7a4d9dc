// Package oauth is the client side of the OAuth 2.0 exchanges ccload makes
// for subscription accounts: PKCE (RFC 7636), the authorization code and
// refresh grants (RFC 6749 §4.1, §6), the device authorization grant
// (RFC 8628), discovery (RFC 8414 / OpenID Connect Discovery), and reading
// the claims of a JWT it was handed (no signature check: ccload only reads
// its own tokens' expiry and account id, it does not trust them for
// authorization). It knows no provider; engine/account does.
package oauth
