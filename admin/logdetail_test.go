package admin_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/store"
)

// debugConfig is testConfig with debug capture on channel main (both keys;
// the first one fails), a channel "plain" without it, token bob with it,
// and 1 KiB bodies.
var debugConfig = strings.NewReplacer(
	"max_body_bytes: 1MiB}", "max_body_bytes: 1MiB, debug_max_bytes: 1KiB}",
	"    key_strategy: sequential\n", "    key_strategy: sequential\n    debug: true\n",
	"  - name: backup\n", `  - name: plain
    urls: [{url: "{{MOCK}}", protocols: [anthropic]}]
    keys: [`+keyBackup+`]
    models: [claude-z]
  - name: backup
`,
	"    expires: 2030-01-01\n", "    expires: 2030-01-01\n    debug: true\n",
).Replace(testConfig) + "pricing:\n  claude-z: {input: 1, output: 2}\n"

// longText is an answer longer than debug_max_bytes.
var longText = strings.Repeat("a long answer ", 200)

func startDebug(t *testing.T) *env {
	t.Helper()
	return startWith(t, "", debugConfig, mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		if r.Key == keyMain1 {
			return mockupstream.Reply{Status: 401, Text: "invalid x-api-key " + r.Key}
		}
		rep := mockupstream.DefaultReply(r)
		rep.Text = longText
		return rep
	}})
}

// send posts an Anthropic request as token with a prompt that quotes the
// client's own token, and returns the id of its log row.
func (e *env) sendDebug(t *testing.T, token, model string, stream bool) int64 {
	t.Helper()
	before, err := e.Store.QueryLogs(t.Context(), store.LogQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	prompt := "my token is " + token + "; " + strings.Repeat("please ", 300)
	body := `{"model":"` + model + `","max_tokens":8,"stream":` + strconv.FormatBool(stream) +
		`,"messages":[{"role":"user","content":"` + prompt + `"}]}`
	resp, b := e.call(t, "POST", "/v1/messages", map[string]string{"x-api-key": token,
		"anthropic-version": "2023-06-01", "content-type": "application/json"}, body)
	if resp.StatusCode != 200 {
		t.Fatalf("proxy: %d %s", resp.StatusCode, b)
	}
	var page adminapi.LogsResponse
	e.waitRows(t, len(before)+1)
	_, lb := e.call(t, "GET", "/admin/logs?limit=1", bearer, "")
	if err := json.Unmarshal([]byte(lb), &page); err != nil || len(page.Rows) != 1 {
		t.Fatalf("GET /admin/logs: %v %s", err, lb)
	}
	return page.Rows[0].ID
}

// detail fetches GET /admin/logs/{id}, checks that no secret of the config
// appears in it, and decodes it.
func (e *env) detail(t *testing.T, id int64) adminapi.LogDetail {
	t.Helper()
	resp, b := e.call(t, "GET", "/admin/logs/"+strconv.FormatInt(id, 10), bearer, "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET /admin/logs/%d: %d %s", id, resp.StatusCode, b)
	}
	for _, s := range secrets {
		if strings.Contains(b, s) {
			t.Errorf("GET /admin/logs/%d holds the secret %q:\n%s", id, s, b)
		}
	}
	var d adminapi.LogDetail
	if err := json.Unmarshal([]byte(b), &d); err != nil {
		t.Fatal(err)
	}
	if d.ID != id {
		t.Fatalf("detail of %d has id %d", id, d.ID)
	}
	return d
}

func header(h []adminapi.DebugHeader, name string) string {
	for _, kv := range h {
		if strings.EqualFold(kv.Name, name) {
			return kv.Value
		}
	}
	return ""
}

// TestLogDetailDebugCapture drives requests through the real gateway to the
// mock upstream and reads them back from GET /admin/logs/{id}.
func TestLogDetailDebugCapture(t *testing.T) {
	e := startDebug(t)

	t.Run("channel_debug_captures_every_attempt", func(t *testing.T) {
		d := e.detail(t, e.sendDebug(t, aliceToken, "claude-x", false))
		if d.Status != 200 || d.Attempts != 2 || len(d.AttemptLog) != 2 || d.Channel != "main" {
			t.Fatalf("row: status %d, %d attempts on %q; want 200 after 2 on main", d.Status, d.Attempts, d.Channel)
		}
		if d.Debug == nil || d.Debug.MaxBytes != 1024 || len(d.Debug.Exchanges) != 2 {
			t.Fatalf("debug = %+v; want two exchanges cut at 1024 bytes", d.Debug)
		}
		failed, won := d.Debug.Exchanges[0], d.Debug.Exchanges[1]
		if failed.Attempt != 1 || won.Attempt != 2 {
			t.Errorf("attempt numbers %d, %d", failed.Attempt, won.Attempt)
		}
		for i, x := range d.Debug.Exchanges {
			rq := x.Request
			if rq.Method != "POST" || !strings.HasSuffix(rq.URL, "/v1/messages") {
				t.Errorf("exchange %d: request %s %s", i, rq.Method, rq.URL)
			}
			if v := header(rq.Header, "anthropic-version"); v != "2023-06-01" {
				t.Errorf("exchange %d: anthropic-version %q", i, v)
			}
			if v := header(rq.Header, "X-Relay-Auth"); v == "" || !strings.Contains(v, "…") {
				t.Errorf("exchange %d: the rewrite rule's credential header is %q, want a fingerprint", i, v)
			}
			// Request body: the client's prompt, cut at 1 KiB, its size whole.
			if !rq.Truncated || len(rq.Body) > 1024 || rq.Size <= 1024 || !strings.Contains(rq.Body, `"model":"claude-x"`) {
				t.Errorf("exchange %d: request body of %d bytes (size %d, truncated %v)", i, len(rq.Body), rq.Size, rq.Truncated)
			}
			if !strings.Contains(rq.Body, "my token is ") {
				t.Errorf("exchange %d: request body lost the prompt: %q", i, rq.Body[:min(80, len(rq.Body))])
			}
		}
		if v := header(failed.Request.Header, "x-api-key"); v != "sk-u…0001" {
			t.Errorf("first attempt's x-api-key = %q, want the fingerprint sk-u…0001", v)
		}
		if v := header(won.Request.Header, "x-api-key"); v != "sk-u…0002" {
			t.Errorf("second attempt's x-api-key = %q, want the fingerprint sk-u…0002", v)
		}
		if failed.Response == nil || failed.Response.Status != 401 || !strings.Contains(failed.Response.Body, "invalid x-api-key") {
			t.Errorf("failed attempt's response = %+v", failed.Response)
		}
		r := won.Response
		if r == nil || r.Status != 200 || !strings.Contains(header(r.Header, "Content-Type"), "json") {
			t.Fatalf("winning response = %+v", r)
		}
		if !r.Truncated || len(r.Body) != 1024 || r.Size <= 1024 || !strings.Contains(r.Body, "a long answer") {
			t.Errorf("winning response body: %d bytes, size %d, truncated %v", len(r.Body), r.Size, r.Truncated)
		}
	})

	t.Run("stream_keeps_raw_upstream_bytes", func(t *testing.T) {
		d := e.detail(t, e.sendDebug(t, aliceToken, "claude-x", true))
		// The first key is cooling since the last request: one attempt or two.
		if d.Debug == nil || len(d.Debug.Exchanges) != d.Attempts {
			t.Fatalf("debug = %+v for %d attempts", d.Debug, d.Attempts)
		}
		r := d.Debug.Exchanges[d.Attempts-1].Response
		if r == nil || r.Status != 200 || !strings.HasPrefix(header(r.Header, "Content-Type"), "text/event-stream") {
			t.Fatalf("stream response = %+v", r)
		}
		if !strings.HasPrefix(r.Body, "event: message_start") || !r.Truncated || len(r.Body) != 1024 || r.Size <= 1024 {
			t.Errorf("stream body: %d bytes of %d, truncated %v, starts %q", len(r.Body), r.Size, r.Truncated, r.Body[:min(40, len(r.Body))])
		}
	})

	t.Run("token_debug_captures_on_any_channel", func(t *testing.T) {
		d := e.detail(t, e.sendDebug(t, bobToken, "claude-z", false))
		if d.Channel != "plain" || d.Debug == nil || len(d.Debug.Exchanges) != 1 {
			t.Fatalf("bob on plain: channel %q, debug %+v", d.Channel, d.Debug)
		}
		if v := header(d.Debug.Exchanges[0].Request.Header, "x-api-key"); v != "sk-b…0004" {
			t.Errorf("x-api-key = %q", v)
		}
	})

	t.Run("no_debug_without_the_flag", func(t *testing.T) {
		id := e.sendDebug(t, aliceToken, "claude-z", false)
		resp, b := e.call(t, "GET", "/admin/logs/"+strconv.FormatInt(id, 10), bearer, "")
		if resp.StatusCode != 200 || !strings.Contains(b, `"debug":null`) || !strings.Contains(b, `"channel":"plain"`) {
			t.Errorf("alice on plain: %d %s", resp.StatusCode, b)
		}
	})

	t.Run("errors", func(t *testing.T) {
		for path, want := range map[string]int{
			"/admin/logs/999999": 404,
			"/admin/logs/abc":    400,
			"/admin/logs/0":      400,
		} {
			resp, b := e.call(t, "GET", path, bearer, "")
			if resp.StatusCode != want || !strings.Contains(b, `"error"`) {
				t.Errorf("GET %s: %d %s; want %d", path, resp.StatusCode, b, want)
			}
		}
		if resp, _ := e.call(t, "GET", "/admin/logs/1", nil, ""); resp.StatusCode != 401 {
			t.Errorf("GET /admin/logs/1 without a session: %d, want 401", resp.StatusCode)
		}
	})
}
