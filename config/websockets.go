package config

import (
	"time"

	"gopkg.in/yaml.v3"
)

// WebSockets is `server.websockets:`, the bounds of the Responses
// WebSocket transport. ccload keeps the transcript behind each
// response id it produced so a later turn's previous_response_id can be
// served by any candidate, grouped in sessions: one per Session-Id (or
// Thread-Id) header per client token, shared by that token's sockets so a
// reconnecting Codex continues, or one per socket when the client sends
// neither header. These bound how much of that is held.
type WebSockets struct {
	// MaxSockets is the most sockets open at once; an upgrade over it is
	// refused with 429. 0 = no limit.
	MaxSockets int
	// MaxSocketsPerToken is the most sockets one client token holds open;
	// over it the upgrade is refused with 429. 0 = no limit.
	MaxSocketsPerToken int
	// MaxSessions is the most sessions held over all tokens; past it the
	// least recently used session is forgotten and a turn naming one of
	// its response ids gets previous_response_not_found.
	MaxSessions int
	// MaxTranscriptBytes bounds one session: a turn whose transcript would
	// be larger is refused with an error event (400 context_too_large, the
	// socket stays open), and storing a new response forgets the session's
	// older responses until the session fits.
	MaxTranscriptBytes Size
	// MaxTotalTranscriptBytes bounds all sessions together; past it the
	// least recently used other sessions are forgotten.
	MaxTotalTranscriptBytes Size
	// SessionTTL forgets a session no turn used for that long (engine
	// clock). A per-socket session also goes when its socket closes.
	SessionTTL Duration
	// IdleTTL closes a socket that sent no frame for that long (pongs
	// keep it alive only as a peer, not as a user). 0 = never.
	IdleTTL Duration
	// PingInterval spaces the pings ccload sends down each socket; a peer
	// that answers none for two intervals is closed.
	PingInterval Duration
}

// DefaultWebSockets are the bounds when the file sets none.
var DefaultWebSockets = WebSockets{
	MaxSockets:              1000,
	MaxSocketsPerToken:      16,
	MaxSessions:             1024,
	MaxTranscriptBytes:      32 << 20,
	MaxTotalTranscriptBytes: 512 << 20,
	SessionTTL:              Duration(time.Hour),
	IdleTTL:                 Duration(30 * time.Minute),
	PingInterval:            Duration(30 * time.Second),
}

var webSocketsFields = fields[WebSockets]{
	intField("max_sockets", 0, func(w *WebSockets) *int { return &w.MaxSockets }),
	intField("max_sockets_per_token", 0, func(w *WebSockets) *int { return &w.MaxSocketsPerToken }),
	intField("max_sessions", 1, func(w *WebSockets) *int { return &w.MaxSessions }),
	positiveSize("max_transcript_bytes", func(w *WebSockets) *Size { return &w.MaxTranscriptBytes }),
	positiveSize("max_total_transcript_bytes", func(w *WebSockets) *Size { return &w.MaxTotalTranscriptBytes }),
	positiveDur("session_ttl", func(w *WebSockets) *Duration { return &w.SessionTTL }),
	durField("idle_ttl", func(w *WebSockets) *Duration { return &w.IdleTTL }),
	positiveDur("ping_interval", func(w *WebSockets) *Duration { return &w.PingInterval }),
}

func positiveSize(key string, get func(*WebSockets) *Size) field[WebSockets] {
	return field[WebSockets]{key, func(d *decoder, n *yaml.Node, p string, w *WebSockets) {
		if z, ok := d.size(n, p); ok && z == 0 {
			d.addf(n, p, "must be greater than 0")
		} else if ok {
			*get(w) = z
		}
	}}
}

func positiveDur(key string, get func(*WebSockets) *Duration) field[WebSockets] {
	return field[WebSockets]{key, func(d *decoder, n *yaml.Node, p string, w *WebSockets) {
		if x, ok := d.duration(n, p); ok && x <= 0 {
			d.addf(n, p, "must be greater than 0")
		} else if ok {
			*get(w) = x
		}
	}}
}
