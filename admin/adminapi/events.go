package adminapi

import "time"

// Event is one step of a client request: "start", "first_byte", "progress"
// or "end", as /admin/events streams it and /admin/active lists it. It
// mirrors live.Event (engine/live) field for field (admin converts, and a
// test keeps the two JSON forms equal) so that a client needs no engine.
type Event struct {
	Type             string    `json:"type"`
	ID               uint64    `json:"id"`
	Time             time.Time `json:"time"`
	Token            string    `json:"token"`
	ClientProtocol   string    `json:"client_protocol"`
	UpstreamProtocol string    `json:"upstream_protocol,omitempty"`
	Model            string    `json:"model"`
	Channel          string    `json:"channel,omitempty"`
	URLHost          string    `json:"url_host,omitempty"`
	Stream           bool      `json:"stream"`
	ElapsedMs        int64     `json:"elapsed_ms"`
	TTFBMs           int64     `json:"ttfb_ms,omitempty"`
	Attempts         int       `json:"attempts,omitempty"`
	InputTokens      int64     `json:"input_tokens,omitempty"`
	OutputTokens     int64     `json:"output_tokens,omitempty"`
	Cost             float64   `json:"cost,omitempty"` // USD, on "end" events
	Status           int       `json:"status,omitempty"`
	FailureScope     string    `json:"failure_scope,omitempty"`
	Error            string    `json:"error,omitempty"`
}
