package engine_test

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// affinityConfig: two equal channels x and y (two keys each, round-robin)
// on one mock speaking Anthropic, and two tokens.
const affinityConfig = `version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: "{{DB}}"}
channels:
  - name: x
    urls: [{url: "{{URL}}", protocols: [anthropic]}]
    keys: [key-x1-000000, key-x2-000000]
    models: [m]
  - name: y
    urls: [{url: "{{URL}}", protocols: [anthropic]}]
    keys: [key-y1-000000, key-y2-000000]
    models: [m]
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
  - name: other
    token_sha256: "{{OTHER_SHA}}"
`

const otherToken = "sk-ccload-other-token-9876543210"

// affinityEnv is a gateway over affinityConfig whose mock can be told to
// fail one channel, and records which key served each session.
type affinityEnv struct {
	g    *gateway
	mock *mockupstream.Server
	mu   sync.Mutex
	down string // channel whose keys answer 500
}

var sessionMark = regexp.MustCompile(`session (\d+)`)

// startAffinity serves affinityConfig; edit, when given, changes the config
// text first.
func startAffinity(t *testing.T, edit ...*strings.Replacer) *affinityEnv {
	t.Helper()
	env := &affinityEnv{}
	m, u := startMock(t, mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		env.mu.Lock()
		down := env.down
		env.mu.Unlock()
		if down != "" && strings.HasPrefix(r.Key, "key-"+down) {
			return fail(500, nil, `{"type":"error","error":{"type":"api_error","message":"down"}}`)
		}
		return ok(r)
	}})
	env.mock = m
	cfg := strings.NewReplacer("{{URL}}", u, "{{OTHER_SHA}}", sha256hex(otherToken)).Replace(affinityConfig)
	for _, r := range edit {
		cfg = r.Replace(cfg)
	}
	env.g = startGateway(t, cfg)
	return env
}

func (env *affinityEnv) setDown(ch string) {
	env.mu.Lock()
	env.down = ch
	env.mu.Unlock()
}

// servedBy maps each session number to the keys that served it (in order,
// successful answers only).
func (env *affinityEnv) servedBy() map[string][]string {
	out := map[string][]string{}
	for _, r := range env.mock.Requests() {
		env.mu.Lock()
		down := env.down
		env.mu.Unlock()
		if down != "" && strings.HasPrefix(r.Key, "key-"+down) {
			continue
		}
		m := sessionMark.FindSubmatch(r.Body)
		if m == nil {
			continue
		}
		out[string(m[1])] = append(out[string(m[1])], r.Key)
	}
	return out
}

// clientStyle sends turn n of session s the way one client names its
// session.
type clientStyle struct {
	name string
	send func(t *testing.T, env *affinityEnv, token string, s, n int) int
}

// anthropicTurns is a Claude-Code-like conversation: the same first user
// message for every session (so only the named session tells them apart),
// then one user message per turn carrying the session's number.
func anthropicTurns(s, n int) string {
	var msgs []string
	msgs = append(msgs, `{"role":"user","content":"hello"}`)
	for i := 1; i <= n; i++ {
		msgs = append(msgs, `{"role":"assistant","content":"ok"}`, fmt.Sprintf(`{"role":"user","content":"session %d turn %d"}`, s, i))
	}
	return strings.Join(msgs, ",")
}

func responsesTurns(s, n int) string {
	var items []string
	items = append(items, `{"role":"user","content":"hello"}`)
	for i := 1; i <= n; i++ {
		items = append(items, `{"role":"assistant","content":"ok"}`, fmt.Sprintf(`{"role":"user","content":"session %d turn %d"}`, s, i))
	}
	return strings.Join(items, ",")
}

var affinityStyles = []clientStyle{
	{"claude-code-header", func(t *testing.T, env *affinityEnv, token string, s, n int) int {
		body := `{"model":"m","max_tokens":16,"messages":[` + anthropicTurns(s, n) + `]}`
		resp, _ := post(t, env.g.URL+"/v1/messages", body, map[string]string{
			"x-api-key": token, "anthropic-version": "2023-06-01", "x-claude-code-session-id": fmt.Sprintf("cc-%d", s)})
		return resp.StatusCode
	}},
	{"claude-code-user-id", func(t *testing.T, env *affinityEnv, token string, s, n int) int {
		uid := fmt.Sprintf(`{\"device_id\":\"d1\",\"account_uuid\":\"\",\"session_id\":\"sess-%d\"}`, s)
		body := `{"model":"m","max_tokens":16,"metadata":{"user_id":"` + uid + `"},"messages":[` + anthropicTurns(s, n) + `]}`
		resp, _ := post(t, env.g.URL+"/v1/messages", body, map[string]string{"x-api-key": token, "anthropic-version": "2023-06-01"})
		return resp.StatusCode
	}},
	{"codex-headers", func(t *testing.T, env *affinityEnv, token string, s, n int) int {
		body := `{"model":"m","input":[` + responsesTurns(s, n) + `]}`
		resp, _ := post(t, env.g.URL+"/v1/responses", body, map[string]string{
			"Authorization": "Bearer " + token, "session-id": fmt.Sprintf("sid-%d", s), "thread-id": fmt.Sprintf("tid-%d", s)})
		return resp.StatusCode
	}},
	{"prompt-cache-key", func(t *testing.T, env *affinityEnv, token string, s, n int) int {
		body := fmt.Sprintf(`{"model":"m","prompt_cache_key":"pck-%d","input":[`, s) + responsesTurns(s, n) + `]}`
		resp, _ := post(t, env.g.URL+"/v1/responses", body, map[string]string{"Authorization": "Bearer " + token})
		return resp.StatusCode
	}},
	{"gemini-fingerprint", func(t *testing.T, env *affinityEnv, token string, s, n int) int {
		// No header names the session: the first user turn differs per
		// session and stays while the conversation grows.
		contents := []string{fmt.Sprintf(`{"role":"user","parts":[{"text":"I am session %d"}]}`, s)}
		for i := 1; i <= n; i++ {
			contents = append(contents, `{"role":"model","parts":[{"text":"ok"}]}`, fmt.Sprintf(`{"role":"user","parts":[{"text":"turn %d"}]}`, i))
		}
		body := `{"systemInstruction":{"parts":[{"text":"You are a coding agent."}]},"contents":[` + strings.Join(contents, ",") + `]}`
		resp, _ := post(t, env.g.URL+"/v1beta/models/m:generateContent", body, map[string]string{"x-goog-api-key": token})
		return resp.StatusCode
	}},
}

// TestAffinityKeepsSessionsOnOneRoute: 8 sessions × 10 turns, interleaved,
// over two equal channels: every session stays on one channel and one key,
// and the sessions spread over both channels. Then the channel of session 0
// fails: the session moves once and stays on its new channel after the old
// one is healthy again. Another token using session 0's id is not steered
// by that pin.
func TestAffinityKeepsSessionsOnOneRoute(t *testing.T) {
	for _, st := range affinityStyles {
		t.Run(st.name, func(t *testing.T) {
			env := startAffinity(t)
			const sessions, turns = 8, 10
			for n := 1; n <= turns; n++ {
				for s := range sessions {
					if code := st.send(t, env, testToken, s, n); code != 200 {
						t.Fatalf("session %d turn %d: status %d", s, n, code)
					}
				}
			}
			served := env.servedBy()
			perChannel := map[byte]int{}
			for s := range sessions {
				keys := served[fmt.Sprint(s)]
				if len(keys) != turns {
					t.Fatalf("session %d: %d answers recorded, want %d", s, len(keys), turns)
				}
				for _, k := range keys {
					if k != keys[0] {
						t.Fatalf("session %d moved between keys/channels: %v", s, keys)
					}
				}
				perChannel[keys[0][4]]++
			}
			if perChannel['x'] == 0 || perChannel['y'] == 0 {
				t.Fatalf("sessions did not spread over both channels: %v", perChannel)
			}

			// Session 0's channel fails: one move, then it stays.
			before := served["0"][0]
			oldCh := before[4:5]
			env.mock.Reset()
			env.setDown(oldCh)
			if code := st.send(t, env, testToken, 0, turns+1); code != 200 {
				t.Fatalf("failover turn: status %d", code)
			}
			moved := env.servedBy()["0"]
			if len(moved) != 1 || moved[0][4:5] == oldCh {
				t.Fatalf("session 0 after its channel failed was served by %v, want one answer from the other channel", moved)
			}
			env.setDown("")
			for _, e := range env.g.Engine.Cooldowns().List() {
				env.g.Engine.Cooldowns().Clear(e.Key)
			}
			env.mock.Reset()
			for n := turns + 2; n <= turns+5; n++ {
				if code := st.send(t, env, testToken, 0, n); code != 200 {
					t.Fatalf("turn %d after recovery: status %d", n, code)
				}
			}
			after := env.servedBy()["0"]
			for _, k := range after {
				if k != moved[0] {
					t.Fatalf("session 0 after recovery went to %v, want it to stay on %s", after, moved[0])
				}
			}

			// Another token with the same session id gets its own pin.
			pins := env.g.Engine.PinnedSessions()
			if code := st.send(t, env, otherToken, 0, 1); code != 200 {
				t.Fatalf("other token: status %d", code)
			}
			if got := env.g.Engine.PinnedSessions(); got != pins+1 {
				t.Fatalf("pinned sessions %d -> %d: the other token reused the first token's pin", pins, got)
			}
		})
	}
}

// TestAffinityPriorityWins: a session that moved to a lower-priority
// channel during an outage moves back once the better channel is healthy.
func TestAffinityPriorityWins(t *testing.T) {
	env := startAffinity(t, strings.NewReplacer("  - name: x\n", "  - name: x\n    priority: 10\n"))
	send := affinityStyles[0].send
	channelOf := func() string {
		got := env.servedBy()["0"]
		if len(got) != 1 {
			t.Fatalf("want one answer, got %v", got)
		}
		env.mock.Reset()
		return got[0][4:5]
	}
	send(t, env, testToken, 0, 1)
	if ch := channelOf(); ch != "x" {
		t.Fatalf("first turn on %s, want the higher-priority x", ch)
	}
	env.setDown("x")
	send(t, env, testToken, 0, 2)
	if ch := channelOf(); ch != "y" {
		t.Fatalf("outage turn on %s, want y", ch)
	}
	env.setDown("")
	send(t, env, testToken, 0, 3) // x still cooling: stays on y
	if ch := channelOf(); ch != "y" {
		t.Fatalf("turn while x cools on %s, want y", ch)
	}
	for _, e := range env.g.Engine.Cooldowns().List() {
		env.g.Engine.Cooldowns().Clear(e.Key)
	}
	send(t, env, testToken, 0, 4)
	if ch := channelOf(); ch != "x" {
		t.Fatalf("after x recovered the session stayed on %s, want it back on x", ch)
	}
}
