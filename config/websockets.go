package config

import (
	"time"

	"gopkg.in/yaml.v3"
)

// WebSockets is `server.websockets:`, the bounds of the Responses
// WebSocket transport (issue 15). Each socket keeps the transcript of its
// conversations so a later turn's previous_response_id can be served by
// any candidate; these bound how much of that is held.
type WebSockets struct {
	// MaxSockets is the most sockets open at once; an upgrade over it is
	// refused with 429. 0 = no limit.
	MaxSockets int
	// MaxSocketsPerToken is the most sockets one client token holds open;
	// over it the upgrade is refused with 429. 0 = no limit.
	MaxSocketsPerToken int
	// MaxSessions is the most response chains (the transcripts behind
	// response ids) one socket remembers; past it the least recently used
	// is forgotten and a turn naming it gets previous_response_not_found.
	MaxSessions int
	// MaxTranscriptBytes bounds the transcript one chain may hold; a turn
	// that would grow it past the bound is refused with an error event
	// (400, context too large for the gateway) and the socket stays open.
	MaxTranscriptBytes Size
	// IdleTTL closes a socket that sent nothing (no frame, no pong) for
	// that long, forgetting its transcripts. 0 = never.
	IdleTTL Duration
}

// DefaultWebSockets are the bounds when the file sets none.
var DefaultWebSockets = WebSockets{
	MaxSockets:         1000,
	MaxSocketsPerToken: 16,
	MaxSessions:        64,
	MaxTranscriptBytes: 32 << 20,
	IdleTTL:            Duration(30 * time.Minute),
}

var webSocketsFields = fields[WebSockets]{
	intField("max_sockets", 0, func(w *WebSockets) *int { return &w.MaxSockets }),
	intField("max_sockets_per_token", 0, func(w *WebSockets) *int { return &w.MaxSocketsPerToken }),
	intField("max_sessions", 1, func(w *WebSockets) *int { return &w.MaxSessions }),
	{"max_transcript_bytes", func(d *decoder, n *yaml.Node, p string, w *WebSockets) {
		if z, ok := d.size(n, p); ok && z == 0 {
			d.addf(n, p, "must be greater than 0")
		} else if ok {
			w.MaxTranscriptBytes = z
		}
	}},
	durField("idle_ttl", func(w *WebSockets) *Duration { return &w.IdleTTL }),
}
