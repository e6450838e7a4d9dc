package adminapi

// WebSocketStatus is the Responses WebSocket transport in /admin/status:
// open sockets, the sessions whose transcripts ccload holds
// (per token and Session-Id, or per socket) and the bytes those hold,
// turns served and upgrades refused.
type WebSocketStatus struct {
	Sockets         int64 `json:"sockets"`
	Sessions        int64 `json:"sessions"`
	TranscriptBytes int64 `json:"transcript_bytes"`
	Turns           int64 `json:"turns"`
	Refused         int64 `json:"refused"`
}
