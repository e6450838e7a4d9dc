package engine_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/internal/clock"
)

// failoverConfig: channel a (priority 10, two keys, sequential) and channel
// b (priority 5), both serving m1 and m2 from {{URLA}} and {{URLB}}.
const failoverConfig = `version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: "{{DB}}"}
routing:
  cooldown: {fallback: {{FALLBACK}}}
  timeouts: {first_byte: 400ms}
channels:
  - name: a
    priority: 10
    urls: [{{URLA}}]
    keys: [key-a1-000000, key-a2-000000]
    key_strategy: sequential
    models: [m1, m2]
  - name: b
    priority: 5
    urls: [{url: "{{URLB}}", protocols: [anthropic]}]
    keys: [key-b1-000000]
    models: [m1, m2]
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
`

type failoverEnv struct {
	g     *gateway
	mock  *mockupstream.Server
	calls atomic.Int64
	clock *clock.Fake // with the "fake-clock" option: the engine's clock and timers
}

// startFailover serves failoverConfig with both channels on one mock whose
// replies script decides (by key and model).
func startFailover(t *testing.T, script func(r *mockupstream.Recorded) mockupstream.Reply, opts ...string) *failoverEnv {
	t.Helper()
	env := &failoverEnv{}
	m, u := startMock(t, mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		env.calls.Add(1)
		return script(r)
	}})
	env.mock = m
	urlA := `{url: "` + u + `", protocols: [anthropic]}`
	fallback := "false"
	timeouts := "timeouts: {first_byte: 400ms}"
	for _, o := range opts {
		switch {
		case strings.HasPrefix(o, "timeouts:"):
			timeouts = o
		case o == "refused-url-first":
			urlA = `{url: "http://127.0.0.1:1", protocols: [anthropic]}, ` + urlA
		case o == "fallback":
			fallback = "true"
		case o == "fake-clock":
			// Two minutes of fake time: a test that passes did not wait
			// for them on the wall clock (the upstream's held-back first
			// byte would have arrived after one).
			env.clock = clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			if timeouts == "timeouts: {first_byte: 400ms}" {
				timeouts = "timeouts: {first_byte: 2m}"
			}
		}
	}
	cfg := strings.NewReplacer("{{URLA}}", urlA, "{{URLB}}", u, "{{FALLBACK}}", fallback, "timeouts: {first_byte: 400ms}", timeouts).Replace(failoverConfig)
	var eopts engine.Options
	if env.clock != nil {
		eopts.Clock = env.clock // the fast upstream client follows its timers too
	}
	env.g = startGatewayWith(t, cfg, eopts)
	return env
}

func (env *failoverEnv) send(t *testing.T, model string, stream bool) (int, string) {
	t.Helper()
	body := `{"model":"` + model + `","max_tokens":16,"messages":[{"role":"user","content":"hi"}]`
	if stream {
		body += `,"stream":true`
	}
	resp, b := post(t, env.g.URL+"/v1/messages", body+"}", map[string]string{"x-api-key": testToken, "anthropic-version": "2023-06-01"})
	return resp.StatusCode, b
}

// keysSeen lists the upstream credentials in order.
func (env *failoverEnv) keysSeen() []string {
	var out []string
	for _, r := range env.mock.Requests() {
		out = append(out, r.Key)
	}
	return out
}

func (env *failoverEnv) cooling(scope failure.Scope, channel string) []cooldown.Entry {
	var out []cooldown.Entry
	for _, e := range env.g.Engine.Cooldowns().List() {
		if e.Key.Scope == scope && e.Key.Channel == channel {
			out = append(out, e)
		}
	}
	return out
}

func fail(status int, header map[string]string, body string) mockupstream.Reply {
	return mockupstream.Reply{Status: status, Header: header, Raw: []byte(body)}
}

func ok(r *mockupstream.Recorded) mockupstream.Reply { return mockupstream.DefaultReply(r) }

// A request answered by its first attempt: the row's attempts column is
// not stored again when the row's own columns say the same (store/
// attempts.go), and reads back as what the engine wrote. On the fake clock
// the attempt and the request last the same 0 ms, so the engine's encoding
// must match the store's byte for byte for the column to be left empty.
func TestOneAttemptRowKeepsNoCopyOfItsAttempt(t *testing.T) {
	env := startFailover(t, ok, "fake-clock")
	if st, body := env.send(t, "m1", false); st != 200 {
		t.Fatalf("status %d %s", st, body)
	}
	row := env.g.waitLogs(t, 1)[0]
	var atts []map[string]any
	if err := json.Unmarshal([]byte(row.AttemptsJSON), &atts); err != nil || len(atts) != 1 {
		t.Fatalf("attempts read back as %q (%v)", row.AttemptsJSON, err)
	}
	if atts[0]["channel"] != row.Channel || atts[0]["key"] != row.KeyFP || atts[0]["status"] != float64(200) {
		t.Errorf("attempt %v does not match the row %+v", atts[0], row)
	}
	db, err := sql.Open("sqlite", filepath.Join(env.g.Dir, "data", "ccload.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var col string
	if err := db.QueryRow("SELECT attempts_json FROM request_logs WHERE id = ?", row.ID).Scan(&col); err != nil {
		t.Fatal(err)
	}
	if col != "" {
		t.Errorf("the attempts column holds %q: the engine's encoding no longer matches store/attempts.go", col)
	}
}

func TestFailoverKey401ThenNextKey(t *testing.T) {
	env := startFailover(t, func(r *mockupstream.Recorded) mockupstream.Reply {
		if r.Key == "key-a1-000000" {
			return fail(401, nil, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
		}
		return ok(r)
	})
	if st, body := env.send(t, "m1", false); st != 200 {
		t.Fatalf("status %d %s", st, body)
	}
	if got := strings.Join(env.keysSeen(), ","); got != "key-a1-000000,key-a2-000000" {
		t.Fatalf("keys tried %s", got)
	}
	cd := env.cooling(failure.ScopeKey, "a")
	if len(cd) != 1 || !strings.HasPrefix(cd[0].Key.KeyFP, "key-") || strings.Contains(cd[0].Key.KeyFP, "key-a1-000000") {
		t.Fatalf("key cooldowns %+v", cd)
	}
	// The next request skips the cooling key at once.
	env.mock.Reset()
	env.send(t, "m1", false)
	if got := strings.Join(env.keysSeen(), ","); got != "key-a2-000000" {
		t.Fatalf("second request tried %s", got)
	}
	// The attempts are on the log row.
	rows := env.g.waitLogs(t, 2)
	first := rows[len(rows)-1]
	if first.Attempts != 2 || !strings.Contains(first.AttemptsJSON, `"scope":"key"`) || strings.Contains(first.AttemptsJSON, "key-a1-000000") {
		t.Fatalf("first row attempts %d %s", first.Attempts, first.AttemptsJSON)
	}
}

func TestFailover429RetryAfterCoolsKeyForThatLong(t *testing.T) {
	env := startFailover(t, func(r *mockupstream.Recorded) mockupstream.Reply {
		if r.Key == "key-a1-000000" {
			return fail(429, map[string]string{"retry-after": "7"}, `{"type":"error","error":{"type":"rate_limit_error","message":"rate limited"}}`)
		}
		return ok(r)
	})
	before := time.Now()
	if st, _ := env.send(t, "m1", false); st != 200 {
		t.Fatalf("status %d", st)
	}
	cd := env.cooling(failure.ScopeKey, "a")
	if len(cd) != 1 {
		t.Fatalf("cooldowns %+v", cd)
	}
	if d := cd[0].Until.Sub(before); d < 6*time.Second || d > 8*time.Second {
		t.Fatalf("key cooled for %s, want about 7s", d)
	}
}

func TestFailoverModel404MovesOnlyThatModel(t *testing.T) {
	env := startFailover(t, func(r *mockupstream.Recorded) mockupstream.Reply {
		if r.Key != "key-b1-000000" && r.Model == "m1" {
			return fail(404, nil, `{"type":"error","error":{"type":"not_found_error","message":"model: m1"}}`)
		}
		return ok(r)
	})
	if st, _ := env.send(t, "m1", false); st != 200 {
		t.Fatalf("m1 status %d", st)
	}
	if got := strings.Join(env.keysSeen(), ","); got != "key-a1-000000,key-b1-000000" {
		t.Fatalf("m1 tried %s (a model failure must go to the next channel, not the next key)", got)
	}
	env.mock.Reset()
	env.send(t, "m2", false)
	if got := strings.Join(env.keysSeen(), ","); got != "key-a1-000000" {
		t.Fatalf("m2 went to %s, want channel a", got)
	}
	env.mock.Reset()
	env.send(t, "m1", false)
	if got := strings.Join(env.keysSeen(), ","); got != "key-b1-000000" {
		t.Fatalf("m1 again went to %s, want b directly", got)
	}
	if len(env.cooling(failure.ScopeChannel, "a")) != 0 {
		t.Fatal("one model failing cooled the whole channel")
	}
}

func TestFailoverAllModelsFailingPromotesChannel(t *testing.T) {
	env := startFailover(t, func(r *mockupstream.Recorded) mockupstream.Reply {
		if r.Key != "key-b1-000000" {
			return fail(500, nil, `{"type":"error","error":{"type":"api_error","message":"boom"}}`)
		}
		return ok(r)
	})
	env.send(t, "m1", false)
	if len(env.cooling(failure.ScopeChannel, "a")) != 0 {
		t.Fatal("promoted after one model")
	}
	env.send(t, "m2", false)
	if len(env.cooling(failure.ScopeChannel, "a")) != 1 {
		t.Fatalf("channel a not promoted: %+v", env.g.Engine.Cooldowns().List())
	}
}

func TestFailoverNextChannelOn500And200ErrorAndSSEError(t *testing.T) {
	cases := map[string]mockupstream.Reply{
		"500":            fail(500, nil, `{"type":"error","error":{"type":"api_error","message":"internal"}}`),
		"200 error body": {Status: 200, Raw: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)},
		"sse error":      {RawEvents: []string{"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"}},
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			env := startFailover(t, func(r *mockupstream.Recorded) mockupstream.Reply {
				if r.Key != "key-b1-000000" {
					return bad
				}
				return ok(r)
			})
			st, body := env.send(t, "m1", name == "sse error")
			if st != 200 || !strings.Contains(body, "Hello") {
				t.Fatalf("status %d body %s", st, body)
			}
			if got := strings.Join(env.keysSeen(), ","); got != "key-a1-000000,key-b1-000000" {
				t.Fatalf("tried %s", got)
			}
		})
	}
}

func TestFailover400GoesToClientAtOnce(t *testing.T) {
	env := startFailover(t, func(r *mockupstream.Recorded) mockupstream.Reply {
		return fail(400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: field required"}}`)
	})
	st, body := env.send(t, "m1", false)
	if st != 400 || !strings.Contains(body, "messages: field required") {
		t.Fatalf("status %d body %s", st, body)
	}
	if n := env.calls.Load(); n != 1 {
		t.Fatalf("upstream called %d times", n)
	}
	if len(env.g.Engine.Cooldowns().List()) != 0 {
		t.Fatal("a client error cooled something")
	}
}

func TestFailoverRefusedURLThenNextURL(t *testing.T) {
	env := startFailover(t, ok, "refused-url-first")
	if st, body := env.send(t, "m1", false); st != 200 {
		t.Fatalf("status %d %s", st, body)
	}
	if got := strings.Join(env.keysSeen(), ","); got != "key-a1-000000" {
		t.Fatalf("served by %s, want channel a's second URL", got)
	}
	if cd := env.cooling(failure.ScopeURL, "a"); len(cd) != 1 || engine.URLOfID(cd[0].Key.URL) != "http://127.0.0.1:1" {
		t.Fatalf("url cooldowns %+v", cd)
	}
}

// TestFailoverSlowFirstByteGoesToNextChannel runs on a fake clock with the
// fasthttp upstream client: the first-byte timer fires when the test
// advances time past timeouts.first_byte (2 minutes), not after waiting.
func TestFailoverSlowFirstByteGoesToNextChannel(t *testing.T) {
	env := startFailover(t, func(r *mockupstream.Recorded) mockupstream.Reply {
		rep := ok(r)
		if r.Key != "key-b1-000000" {
			rep.FirstByteDelay = time.Minute // ends when the gateway gives up on it
		}
		return rep
	}, "fake-clock")
	type answer struct {
		st   int
		body string
	}
	done := make(chan answer, 1)
	go func() {
		st, body := env.send(t, "m1", true)
		done <- answer{st, body}
	}()
	// Channel a's key 1 holds the first byte back; once its attempt has
	// reached the upstream (and armed its timers), time passes.
	for env.calls.Load() < 1 || env.clock.Timers() == 0 {
		runtime.Gosched()
	}
	env.clock.Advance(2 * time.Minute)
	a := <-done
	if a.st != 200 || !strings.Contains(a.body, "message_stop") {
		t.Fatalf("status %d body %s", a.st, a.body)
	}
	if keys := env.keysSeen(); len(keys) != 2 || keys[1] != "key-b1-000000" {
		t.Fatalf("upstream keys %v, want a's first key then channel b", keys)
	}
	cd := env.cooling(failure.ScopeURL, "a")
	if len(cd) != 1 || cd[0].Kind != failure.KindTimeout {
		t.Fatalf("url cooldowns %+v", cd)
	}
}

func TestFailoverAfterContentNeverRetries(t *testing.T) {
	env := startFailover(t, func(r *mockupstream.Recorded) mockupstream.Reply {
		rep := ok(r)
		rep.CutAfterEvents = 5
		return rep
	})
	st, body := env.send(t, "m1", true)
	if st != 200 || !strings.Contains(body, "text_delta") {
		t.Fatalf("status %d body %s", st, body)
	}
	if n := env.calls.Load(); n != 1 {
		t.Fatalf("upstream called %d times after content was sent", n)
	}
	if !strings.HasSuffix(body, "\n\n") || !strings.Contains(body, "event: error") || strings.Contains(body, "message_stop") {
		t.Fatalf("client stream should end with an error event:\n%s", body)
	}
	rows := env.g.waitLogs(t, 1)
	if !rows[0].Incomplete || rows[0].Error == "" {
		t.Fatalf("row %+v", rows[0])
	}
}

func TestClientDisconnectCancelsUpstream(t *testing.T) {
	cancelled := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m1\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n")
		for {
			io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n")
			fl.Flush()
			select {
			case <-r.Context().Done():
				close(cancelled)
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	defer up.Close()
	cfg := strings.NewReplacer("{{URLA}}", `{url: "`+up.URL+`", protocols: [anthropic]}`, "{{URLB}}", up.URL, "{{FALLBACK}}", "false").Replace(failoverConfig)
	g := startGateway(t, cfg)
	req, _ := http.NewRequest("POST", g.URL+"/v1/messages", strings.NewReader(`{"model":"m1","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("x-api-key", testToken)
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream request was not cancelled after the client left")
	}
	rows := g.waitLogs(t, 1)
	if rows[0].Status != 499 || len(g.Engine.Cooldowns().List()) != 0 {
		t.Fatalf("row status %d, cooldowns %v: a client leaving is not an upstream failure", rows[0].Status, g.Engine.Cooldowns().List())
	}
}

func TestFallbackWhenEverythingIsCooling(t *testing.T) {
	for _, fb := range []bool{false, true} {
		name := map[bool]string{false: "off", true: "on"}[fb]
		t.Run(name, func(t *testing.T) {
			var opts []string
			if fb {
				opts = append(opts, "fallback")
			}
			failing := atomic.Bool{}
			failing.Store(true)
			env := startFailover(t, func(r *mockupstream.Recorded) mockupstream.Reply {
				if failing.Load() {
					return fail(500, nil, `{"type":"error","error":{"type":"api_error","message":"down"}}`)
				}
				return ok(r)
			}, opts...)
			if st, _ := env.send(t, "m1", false); st != 500 {
				t.Fatalf("first request status %d, want the upstream's 500", st)
			}
			failing.Store(false)
			env.mock.Reset()
			st, body := env.send(t, "m1", false)
			if fb {
				if st != 200 || len(env.keysSeen()) != 1 {
					t.Fatalf("fallback on: %d %s (tried %v)", st, body, env.keysSeen())
				}
				return
			}
			if st != 503 || !strings.Contains(body, "cooldown ends in") || len(env.keysSeen()) != 0 {
				t.Fatalf("fallback off: %d %s (tried %v)", st, body, env.keysSeen())
			}
		})
	}
}

// TestRequestDeadlineStopsFailover runs on a fake clock: every upstream
// holds its first byte back. Channel a's attempt ends at its first_byte
// (40 s) and cools its URL; channel b's wait is cut at the request's
// deadline (1 min after arrival), which cools nothing, and no third
// attempt starts: the client gets a 504 naming both attempts.
func TestRequestDeadlineStopsFailover(t *testing.T) {
	env := startFailover(t, func(r *mockupstream.Recorded) mockupstream.Reply {
		rep := ok(r)
		rep.FirstByteDelay = time.Minute // ends when the gateway gives up on it
		return rep
	}, "fake-clock", "fallback", "timeouts: {first_byte: 40s, request: 1m}")
	type answer struct {
		st   int
		body string
	}
	done := make(chan answer, 1)
	go func() {
		st, body := env.send(t, "m1", true)
		done <- answer{st, body}
	}()
	for n, step := range []time.Duration{40 * time.Second, 20 * time.Second} {
		for env.calls.Load() < int64(n+1) || env.clock.Timers() == 0 {
			runtime.Gosched()
		}
		env.clock.Advance(step)
	}
	a := <-done
	if a.st != 504 || !strings.Contains(a.body, `"type":"error"`) || !strings.Contains(a.body, "routing.timeouts.request") ||
		!strings.Contains(a.body, "after 2 attempt(s) (channels a, b)") {
		t.Fatalf("status %d body %s", a.st, a.body)
	}
	if n := env.calls.Load(); n != 2 {
		t.Fatalf("%d upstream attempts, want 2: none may start after the deadline", n)
	}
	if cd := env.cooling(failure.ScopeURL, "a"); len(cd) != 1 || cd[0].Kind != failure.KindTimeout {
		t.Fatalf("channel a's URL cooldowns %+v: it exceeded its own first_byte", cd)
	}
	for _, e := range env.g.Engine.Cooldowns().List() {
		if e.Key.Channel == "b" {
			t.Fatalf("channel b cooled by the request's deadline: %+v", e)
		}
	}
}
