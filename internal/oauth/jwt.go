package oauth

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// Claims decodes the payload of a JWT without checking its signature (see
// the package doc), or nil when s is not a JWT.
func Claims(s string) map[string]any {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// JWTExpiry is the exp claim of a JWT, zero when absent.
func JWTExpiry(s string) time.Time {
	if exp, ok := Claims(s)["exp"].(float64); ok && exp > 0 {
		return time.Unix(int64(exp), 0).UTC()
	}
	return time.Time{}
}

// JWTIssuedAt is the iat claim of a JWT, zero when absent.
func JWTIssuedAt(s string) time.Time {
	if iat, ok := Claims(s)["iat"].(float64); ok && iat > 0 {
		return time.Unix(int64(iat), 0).UTC()
	}
	return time.Time{}
}
