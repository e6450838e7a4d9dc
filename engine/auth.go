package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/valyala/fasthttp"

	"ccload/config"
)

// clientToken extracts the client's credential from any of the places the
// four families' SDKs put it: Authorization Bearer, x-api-key,
// x-goog-api-key, or the ?key= query parameter.
func clientToken(ctx *fasthttp.RequestCtx) string {
	return tokenFrom(&ctx.Request.Header, ctx.QueryArgs())
}

// tokenFrom is clientToken over a header and query, so it also runs before
// the body is read (Engine.headerReceived).
func tokenFrom(h *fasthttp.RequestHeader, q *fasthttp.Args) string {
	if v := string(h.Peek("Authorization")); v != "" {
		if t, ok := strings.CutPrefix(v, "Bearer "); ok {
			return strings.TrimSpace(t)
		}
		if t, ok := strings.CutPrefix(v, "bearer "); ok {
			return strings.TrimSpace(t)
		}
	}
	for _, name := range []string{"x-api-key", "x-goog-api-key", "api-key"} {
		if v := h.Peek(name); len(v) > 0 {
			return string(v)
		}
	}
	return string(q.Peek("key"))
}

// authenticate finds the token the client presented. Only its sha256 is
// compared: the config never holds a token in clear, and a map lookup on a
// hash leaks nothing useful through timing.
func authenticate(snap *config.Snapshot, raw string) *config.Token {
	if raw == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(raw))
	return snap.TokenBySHA256(hex.EncodeToString(sum[:]))
}
