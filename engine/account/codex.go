package account

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// The Codex backend's request dialect, as the Codex CLI speaks it
// (openai/codex codex-rs): requests go to <base>/responses with
// Authorization: Bearer <access token>, chatgpt-account-id (the account id
// of the sign-in, core/src/client.rs), originator (login/src/auth/
// default_client.rs DEFAULT_ORIGINATOR "codex_cli_rs") and session_id (the
// conversation id, core/src/client.rs). Its body (core/src/client_common.rs
// ResponsesApiRequest) carries only the fields in codexFields, with
// store: false and stream: true, and asks for reasoning.encrypted_content since nothing is
// stored server-side.
const CodexOriginator = "codex_cli_rs"

// codexFields are the top-level fields the Codex CLI sends; the backend
// refuses others (max_output_tokens, metadata, temperature, ...).
var codexFields = map[string]bool{
	"model": true, "instructions": true, "input": true, "tools": true, "tool_choice": true,
	"parallel_tool_calls": true, "reasoning": true, "store": true, "stream": true, "include": true,
	"prompt_cache_key": true, "text": true,
}

// CodexBody rewrites a Responses request body into the Codex backend's
// dialect. It reports the fields it dropped, for the log row's notes.
func CodexBody(body []byte) ([]byte, []string, error) {
	var dropped []string
	var err error
	gjson.ParseBytes(body).ForEach(func(k, _ gjson.Result) bool {
		if !codexFields[k.String()] {
			dropped = append(dropped, k.String())
		}
		return true
	})
	for _, k := range dropped {
		if body, err = sjson.DeleteBytes(body, k); err != nil {
			return nil, nil, err
		}
	}
	if body, err = sjson.SetBytes(body, "store", false); err != nil {
		return nil, nil, err
	}
	// Always a stream: the backend refuses anything else (codexwhole.go).
	if body, err = sjson.SetBytes(body, "stream", true); err != nil {
		return nil, nil, err
	}
	if !gjson.GetBytes(body, "instructions").Exists() {
		if body, err = sjson.SetBytes(body, "instructions", ""); err != nil {
			return nil, nil, err
		}
	}
	if in := gjson.GetBytes(body, "input"); in.Type == gjson.String {
		msg := []map[string]any{{"type": "message", "role": "user", "content": []map[string]any{{"type": "input_text", "text": in.String()}}}}
		if body, err = sjson.SetBytes(body, "input", msg); err != nil {
			return nil, nil, err
		}
	}
	if gjson.GetBytes(body, "reasoning").Exists() {
		has := false
		for _, v := range gjson.GetBytes(body, "include").Array() {
			has = has || v.String() == "reasoning.encrypted_content"
		}
		if !has {
			if body, err = sjson.SetBytes(body, "include.-1", "reasoning.encrypted_content"); err != nil {
				return nil, nil, err
			}
		}
	}
	return body, dropped, nil
}

// Window is one quota window the provider reported.
type Window struct {
	UsedPercent   float64   `json:"used_percent"`
	WindowMinutes int       `json:"window_minutes,omitempty"`
	ResetsAt      time.Time `json:"resets_at,omitzero"`
}

// Quota is an account's quota windows: Codex reports a primary (short,
// five hours) and a secondary (weekly) window.
type Quota struct {
	Primary   *Window `json:"primary,omitempty"`
	Secondary *Window `json:"secondary,omitempty"`
}

// CodexQuota reads the usage headers the Codex backend sends on every
// answer: x-codex-{primary,secondary}-used-percent, -window-minutes and
// -reset-at (unix seconds), or -reset-after-seconds in older versions
// (codex-rs/codex-api/src/rate_limits.rs). ok is false when none is there.
func CodexQuota(get func(string) string, now time.Time) (q Quota, ok bool) {
	win := func(name string) *Window {
		p := "x-codex-" + name + "-"
		used := get(p + "used-percent")
		if used == "" {
			return nil
		}
		w := &Window{}
		w.UsedPercent, _ = strconv.ParseFloat(strings.TrimSpace(used), 64)
		w.WindowMinutes, _ = strconv.Atoi(strings.TrimSpace(get(p + "window-minutes")))
		if at, err := strconv.ParseInt(strings.TrimSpace(get(p+"reset-at")), 10, 64); err == nil && at > 0 {
			w.ResetsAt = time.Unix(at, 0).UTC()
		} else if after, err := strconv.ParseInt(strings.TrimSpace(get(p+"reset-after-seconds")), 10, 64); err == nil && after >= 0 {
			w.ResetsAt = now.Add(time.Duration(after) * time.Second).UTC()
		}
		return w
	}
	q.Primary, q.Secondary = win("primary"), win("secondary")
	return q, q.Primary != nil || q.Secondary != nil
}

// ExhaustedUntil is the latest reset among the windows used up, zero when
// none is.
func (q Quota) ExhaustedUntil(now time.Time) time.Time {
	var until time.Time
	for _, w := range []*Window{q.Primary, q.Secondary} {
		if w != nil && w.UsedPercent >= 100 && w.ResetsAt.After(now) && w.ResetsAt.After(until) {
			until = w.ResetsAt
		}
	}
	return until
}

// CodexUsageLimit reads a usage-limit error (HTTP 429 with
// {"error": {"type": "usage_limit_reached", "resets_at": unix seconds,
// "resets_in_seconds": n}}, codex-rs/core/src/client.rs and error.rs
// UsageLimitReachedError) and returns when the account can be used again.
func CodexUsageLimit(status int, body []byte, now time.Time) (time.Time, bool) {
	if status != 429 {
		return time.Time{}, false
	}
	e := gjson.GetBytes(body, "error")
	switch e.Get("type").String() {
	case "usage_limit_reached", "usage_not_included":
	default:
		return time.Time{}, false
	}
	if at := e.Get("resets_at").Int(); at > 0 {
		return time.Unix(at, 0).UTC(), true
	}
	if in := e.Get("resets_in_seconds").Int(); in > 0 {
		return now.Add(time.Duration(in) * time.Second).UTC(), true
	}
	return time.Time{}, true
}

func (q Quota) json() string {
	if q.Primary == nil && q.Secondary == nil {
		return ""
	}
	b, _ := json.Marshal(q)
	return string(b)
}

func parseQuota(s string) Quota {
	var q Quota
	if s != "" {
		_ = json.Unmarshal([]byte(s), &q)
	}
	return q
}
