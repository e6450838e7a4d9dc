package adminapi

// TestRequest is the body of POST /admin/channels/{name}/test. Every field
// is optional: Model defaults to the channel's check model, else its first
// enabled model; URL and Key are indexes into the channel's urls and keys
// (0 = the first).
type TestRequest struct {
	Model  string `json:"model,omitempty"`
	URL    int    `json:"url,omitempty"`
	Key    int    `json:"key,omitempty"`
	Stream bool   `json:"stream,omitempty"`
}

// ProbeResult is one small real request sent through a channel: the answer
// to a channel test (POST /admin/channels/{name}/test) and a channel's
// latest scheduled check (Channel.LastCheck). The URL is masked and the key
// is shown as its key id.
type ProbeResult struct {
	Channel  string `json:"channel"`
	Model    string `json:"model"`
	Upstream string `json:"upstream_model"`
	URL      string `json:"url"`
	Key      string `json:"key"`
	Protocol string `json:"protocol"`
	Stream   bool   `json:"stream"`
	OK       bool   `json:"ok"`
	Status   int    `json:"status"`
	TTFBMs   int64  `json:"ttfb_ms"`
	TotalMs  int64  `json:"total_ms"`
	Kind     string `json:"kind,omitempty"`
	Scope    string `json:"scope,omitempty"`
	Message  string `json:"message,omitempty"`
}

// ChatRequest is the body of POST /admin/channels/{name}/chat: a real chat
// with the channel. Empty fields take the defaults: the channel's check
// model, else its first enabled model, and the prompt "Say hello in five
// words.".
type ChatRequest struct {
	Model  string `json:"model,omitempty"`
	Prompt string `json:"prompt,omitempty"`
}

// ChatDelta is the data of a "delta" event of a channel chat: the next
// piece of the answer.
type ChatDelta struct {
	Text string `json:"text"`
}

// ChatDone is the data of the "done" event that ends a channel chat.
type ChatDone struct {
	OK         bool   `json:"ok"`
	Status     int    `json:"status"` // what a client would have got
	Channel    string `json:"channel"`
	Model      string `json:"model"`
	Upstream   string `json:"upstream_model"`
	Protocol   string `json:"protocol"`
	Key        string `json:"key"` // key id
	Attempts   int    `json:"attempts"`
	TTFBMs     int64  `json:"ttfb_ms"`
	DurationMs int64  `json:"duration_ms"`
	RequestID  string `json:"request_id"` // of the log row
	Error      string `json:"error,omitempty"`
}
