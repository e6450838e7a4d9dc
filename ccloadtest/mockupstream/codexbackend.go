package mockupstream

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// CodexBackend is a mock of the ChatGPT Codex backend
// (https://chatgpt.com/backend-api/codex/responses) in front of a mock
// Server's Responses endpoint. It enforces the dialect the Codex CLI
// speaks, so a gateway that sends anything else fails here as it would
// there:
//   - Authorization: Bearer <an access token SignIn issued and not expired>
//     (expired: 401 with code token_expired);
//   - chatgpt-account-id equal to the token's account, originator and
//     session_id headers;
//   - body with store: false, stream: true (anything else: 400 "Stream
//     must be set to true", as the real backend answers) and
//     instructions; max_output_tokens, metadata, temperature, top_p and
//     user refused with a 400.
//
// Every answer carries the account's quota headers
// (x-codex-primary-used-percent, -window-minutes, -reset-at and the same
// for secondary). An exhausted account gets the 429 usage_limit_reached
// error with resets_at until its reset.
type CodexBackend struct {
	SignIn *SignIn
	Inner  *Server
	// Limit is how many requests an account may make per primary window
	// (default: unlimited); Window is that window (default 5h).
	Limit  int
	Window time.Duration
	Now    func() time.Time

	mu      sync.Mutex
	used    map[string]int
	resets  map[string]time.Time
	calls   map[string]int
	limits  map[string]int // usage-limit 429s answered per account
	sockets int
}

// codexRefused are fields the backend answers "Unsupported parameter" for.
var codexRefused = []string{"max_output_tokens", "metadata", "temperature", "top_p", "user"}

func (b *CodexBackend) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

func codexError(w http.ResponseWriter, status int, typ, code, msg string, extra map[string]any) {
	e := map[string]any{"type": typ, "message": msg}
	if code != "" {
		e["code"] = code
	}
	for k, v := range extra {
		e[k] = v
	}
	writeJSONValue(w, status, map[string]any{"error": e})
}

// ServeHTTP implements http.Handler.
func (b *CodexBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	access, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	acct, ok, expired := b.SignIn.Check(access)
	switch {
	case expired:
		codexError(w, 401, "invalid_request_error", "token_expired", "Provided authentication token is expired. Please try signing in again.", nil)
		return
	case !ok:
		codexError(w, 401, "invalid_request_error", "invalid_api_key", "invalid access token", nil)
		return
	case r.Header.Get("chatgpt-account-id") != acct:
		codexError(w, 403, "invalid_request_error", "", "chatgpt-account-id does not match the token's account", nil)
		return
	case r.Header.Get("originator") == "" || r.Header.Get("session_id") == "":
		codexError(w, 400, "invalid_request_error", "", "originator and session_id headers are required", nil)
		return
	}
	if isSocket(r) {
		// WebSocket mode (the Codex CLI's supports_websockets): the same
		// headers on the upgrade, then each frame as a request.
		b.mu.Lock()
		b.sockets++
		b.mu.Unlock()
		b.serveSocket(w, r)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if s := gjson.GetBytes(body, "stream"); !s.Bool() {
		// The backend only streams; this is its answer to anything else
		// (the Codex CLI always sends stream: true, codex-rs/core
		// client_common.rs ResponsesApiRequest).
		writeJSONValue(w, 400, map[string]any{"detail": "Stream must be set to true"})
		return
	}
	if s := gjson.GetBytes(body, "store"); !s.Exists() || s.Bool() {
		codexError(w, 400, "invalid_request_error", "", "Store must be set to false", nil)
		return
	}
	if !gjson.GetBytes(body, "instructions").Exists() {
		codexError(w, 400, "invalid_request_error", "", "Instructions are required", nil)
		return
	}
	for _, f := range codexRefused {
		if gjson.GetBytes(body, f).Exists() {
			codexError(w, 400, "invalid_request_error", "", "Unsupported parameter: "+f, nil)
			return
		}
	}
	now := b.now()
	b.mu.Lock()
	if b.used == nil {
		b.used, b.resets, b.calls, b.limits = map[string]int{}, map[string]time.Time{}, map[string]int{}, map[string]int{}
	}
	window := b.Window
	if window <= 0 {
		window = 5 * time.Hour
	}
	if reset, ok := b.resets[acct]; !ok || !now.Before(reset) {
		b.used[acct], b.resets[acct] = 0, now.Add(window)
	}
	reset := b.resets[acct]
	exhausted := b.Limit > 0 && b.used[acct] >= b.Limit
	if !exhausted {
		b.used[acct]++
		b.calls[acct]++
	} else {
		b.limits[acct]++
	}
	pct := 0.0
	if b.Limit > 0 {
		pct = float64(b.used[acct]) * 100 / float64(b.Limit)
	}
	b.mu.Unlock()
	h := w.Header()
	h.Set("x-codex-primary-used-percent", strconv.FormatFloat(pct, 'f', -1, 64))
	h.Set("x-codex-primary-window-minutes", strconv.Itoa(int(window/time.Minute)))
	h.Set("x-codex-primary-reset-at", strconv.FormatInt(reset.Unix(), 10))
	h.Set("x-codex-secondary-used-percent", "1")
	h.Set("x-codex-secondary-window-minutes", "10080")
	h.Set("x-codex-secondary-reset-after-seconds", "604800")
	if exhausted {
		codexError(w, 429, "usage_limit_reached", "", "The usage limit has been reached", map[string]any{
			"plan_type": "plus", "resets_at": reset.Unix(), "resets_in_seconds": int64(reset.Sub(now).Seconds()),
		})
		return
	}
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	b.Inner.ServeHTTP(&untypedStream{ResponseWriter: w}, r2)
}

// untypedStream sends a 2xx stream without its Content-Type, as the real
// backend does (gateways that relay it report that none of its stream
// answers carries the header), so that a gateway which picks the stream
// path by that header fails here too.
type untypedStream struct {
	http.ResponseWriter
	wrote bool
}

func (u *untypedStream) WriteHeader(code int) {
	if !u.wrote {
		u.wrote = true
		h := u.Header()
		if code/100 == 2 && strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
			h["Content-Type"] = nil // nil, not deleted: net/http would sniff one
		}
	}
	u.ResponseWriter.WriteHeader(code)
}

func (u *untypedStream) Write(p []byte) (int, error) {
	if !u.wrote {
		u.WriteHeader(http.StatusOK)
	}
	return u.ResponseWriter.Write(p)
}

func (u *untypedStream) Flush() {
	if !u.wrote {
		u.WriteHeader(http.StatusOK)
	}
	if f, ok := u.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Exhaust uses up account's primary window until reset.
func (b *CodexBackend) Exhaust(account string, reset time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used == nil {
		b.used, b.resets, b.calls, b.limits = map[string]int{}, map[string]time.Time{}, map[string]int{}, map[string]int{}
	}
	if b.Limit <= 0 {
		b.Limit = 1 << 30
	}
	b.used[account], b.resets[account] = b.Limit, reset
}

// Calls is how many requests account got answered (not refused).
func (b *CodexBackend) Calls(account string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls[account]
}

// Sockets is how many WebSocket upgrades passed the header checks.
func (b *CodexBackend) Sockets() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sockets
}

// LimitErrors is how many usage-limit 429s account was answered.
func (b *CodexBackend) LimitErrors(account string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limits[account]
}

func (b *CodexBackend) String() string { return fmt.Sprintf("codex backend (limit %d)", b.Limit) }
