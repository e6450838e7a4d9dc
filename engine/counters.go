package engine

import "github.com/ccload/ccload/config"

// Accessors for the admin API and /metrics; they read, never change, the
// engine's state.

// Unauthorized is the number of proxy requests refused for a missing or
// invalid client token since start. Design §5.7: they get no log row, so
// /metrics counts them from here.
func (e *Engine) Unauthorized() int64 { return e.unauthorized.Load() }

// KeyID is how logs, cooldowns and the admin API name a channel key: its
// fingerprint plus 8 hex digits of its sha256 ("sk-a…f3c9#1a2b3c4d").
func KeyID(k config.Secret) string { return keyID(k) }
