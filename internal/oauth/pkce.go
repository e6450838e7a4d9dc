package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
)

// PKCE returns a code verifier and its S256 challenge (RFC 7636 §4.1-4.2):
// 64 random bytes, base64url without padding (86 characters, inside the
// 43-128 the RFC allows).
func PKCE() (verifier, challenge string) {
	verifier = randomString(64)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// Challenge is the S256 challenge of verifier.
func Challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// State returns a random state value for an authorization request.
func State() string { return randomString(32) }

func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("oauth: no randomness: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
