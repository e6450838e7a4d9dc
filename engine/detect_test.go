package engine_test

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/internal/clock"
)

// detectConfig: channel "relay" serves m1 from {{URL}}, which declares no
// protocols, so the engine detects what it speaks.
const detectConfig = `version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: "{{DB}}"}
routing:
  timeouts: {first_byte: 5s}
channels:
  - name: relay
    urls: [{{URL}}]
    keys: [key-relay-0000]
    models: [m1]
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
`

type detectEnv struct {
	g     *gateway
	mock  *mockupstream.Server
	clock *clock.Fake
}

// startDetect serves detectConfig in front of a mock that speaks only the
// given families, on a fake clock.
func startDetect(t *testing.T, opts mockupstream.Options) *detectEnv {
	t.Helper()
	m, u := startMock(t, opts)
	env := &detectEnv{mock: m, clock: clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))}
	// net/http stops at once when a fake timer cancels the attempt (see
	// startFailover).
	env.g = startGatewayWith(t, strings.ReplaceAll(detectConfig, "{{URL}}", u),
		engine.Options{Clock: env.clock, Transport: http.DefaultTransport})
	return env
}

func (env *detectEnv) chat(t *testing.T, stream bool) (int, string) {
	t.Helper()
	body := `{"model":"m1","messages":[{"role":"user","content":"hi"}]`
	if stream {
		body += `,"stream":true`
	}
	resp, b := post(t, env.g.URL+"/v1/chat/completions", body+"}", map[string]string{"Authorization": "Bearer " + testToken})
	return resp.StatusCode, b
}

// hits counts the mock's requests by path.
func (env *detectEnv) hits() map[string]int {
	out := map[string]int{}
	for _, r := range env.mock.Requests() {
		out[r.Path]++
	}
	return out
}

func (env *detectEnv) requireNothingCooling(t *testing.T) {
	t.Helper()
	if cds := env.g.Engine.Cooldowns().List(); len(cds) != 0 {
		t.Fatalf("detection cooled %+v", cds)
	}
}

func (env *detectEnv) detected(t *testing.T) []engine.Detection {
	t.Helper()
	for _, ch := range env.g.Engine.ChannelStates() {
		if ch.Name == "relay" {
			return ch.URLs[0].Detected
		}
	}
	t.Fatal("channel relay missing")
	return nil
}

// A Chat client, a URL that declares nothing and speaks only Anthropic:
// the first request probes Chat, misses, converts to Anthropic and learns
// it; the next four go straight to Anthropic. Nothing cools.
func TestDetectChatClientOnAnthropicOnlyURL(t *testing.T) {
	env := startDetect(t, mockupstream.Options{Families: []string{mockupstream.Anthropic}})
	for i := range 5 {
		stream := i == 4
		st, body := env.chat(t, stream)
		switch {
		case st != 200:
			t.Fatalf("request %d: %d %s", i, st, body)
		case !stream && (gjson.Get(body, "object").String() != "chat.completion" || !strings.Contains(body, mockText)):
			t.Fatalf("request %d is not the Chat answer: %s", i, body)
		case stream && (!strings.Contains(body, `"object":"chat.completion.chunk"`) || !strings.Contains(body, `"content":" mock"`) || !strings.HasSuffix(strings.TrimSpace(body), "data: [DONE]")):
			t.Fatalf("request %d is not the Chat stream: %s", i, body)
		}
	}
	if got := env.hits(); got["/v1/chat/completions"] != 1 || got["/v1/messages"] != 5 || len(got) != 2 {
		t.Fatalf("upstream hits %v, want one Chat probe and five Anthropic calls", got)
	}
	env.requireNothingCooling(t)
	if got := env.detected(t); len(got) != 1 || got[0].Client != "openai" || got[0].Protocol != "anthropic" {
		t.Fatalf("detected %+v", got)
	}

	rows := env.g.waitLogs(t, 5)
	first := rows[len(rows)-1]
	var atts []struct {
		Protocol string `json:"protocol"`
		Status   int    `json:"status"`
		Scope    string `json:"scope"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal([]byte(first.AttemptsJSON), &atts); err != nil {
		t.Fatal(err, first.AttemptsJSON)
	}
	if len(atts) != 2 || atts[0].Protocol != "openai" || atts[0].Status != 404 || atts[0].Scope != "" ||
		!strings.Contains(atts[0].Error, "protocol detection") || atts[1].Protocol != "anthropic" || atts[1].Status != 200 {
		t.Fatalf("first request's attempts %s", first.AttemptsJSON)
	}
	if first.Status != 200 || first.UpstreamProtocol != "anthropic" {
		t.Fatalf("first row %+v", first)
	}
}

// Concurrent first requests do not stampede: one probes, the others wait
// for its verdict.
func TestDetectConcurrentFirstRequestsProbeOnce(t *testing.T) {
	env := startDetect(t, mockupstream.Options{Families: []string{mockupstream.Anthropic},
		Script: func(r *mockupstream.Recorded) mockupstream.Reply {
			rep := mockupstream.DefaultReply(r)
			rep.FirstByteDelay = 50 * time.Millisecond // keep the probe in flight while the others arrive
			return rep
		}})
	const n = 8
	var wg sync.WaitGroup
	status := make([]int, n)
	for i := range n {
		wg.Go(func() { status[i], _ = env.chat(t, false) })
	}
	wg.Wait()
	for i, st := range status {
		if st != 200 {
			t.Fatalf("request %d: %d", i, st)
		}
	}
	if got := env.hits(); got["/v1/chat/completions"] != 1 || got["/v1/messages"] != n {
		t.Fatalf("upstream hits %v, want one Chat probe and %d Anthropic calls", got, n)
	}
	env.requireNothingCooling(t)
}

// A model 404 in the client's own protocol is the model's failure (design
// §6): the model cools and no other family is probed.
func TestDetectModel404IsAModelFailure(t *testing.T) {
	env := startDetect(t, mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		return mockupstream.Reply{Status: 404, Raw: []byte(`{"error":{"message":"The model ` + "`m1`" + ` does not exist","type":"invalid_request_error","code":"model_not_found"}}`)}
	}})
	if st, body := env.chat(t, false); st != 404 {
		t.Fatalf("status %d %s, want the upstream's 404", st, body)
	}
	if got := env.hits(); got["/v1/chat/completions"] != 1 || len(got) != 1 {
		t.Fatalf("upstream hits %v, want only the Chat call", got)
	}
	cds := env.g.Engine.Cooldowns().List()
	if !slices.ContainsFunc(cds, func(e cooldown.Entry) bool { return e.Key.Scope == failure.ScopeModel && e.Key.Model == "m1" }) {
		t.Fatalf("cooldowns %+v, want model m1 cooling", cds)
	}
	if got := env.detected(t); len(got) != 0 {
		t.Fatalf("a failed request taught %+v", got)
	}
}

// A URL where every family misses is left alone for ten minutes (by the
// engine's clock), then probed again; nothing cools meanwhile. A reload
// that changes the file forgets what was learned.
func TestDetectAllMissedIsReprobedAfterTenMinutes(t *testing.T) {
	env := startDetect(t, mockupstream.Options{Families: []string{"none"}})
	st, body := env.chat(t, false)
	if st != 502 || !strings.Contains(body, "protocol detection") {
		t.Fatalf("status %d %s, want 502 naming protocol detection", st, body)
	}
	want := map[string]int{"/v1/chat/completions": 1, "/v1/messages": 1, "/v1/responses": 1, "/v1beta/models/m1:generateContent": 1}
	if got := env.hits(); !sameCounts(got, want) {
		t.Fatalf("upstream hits %v, want one probe per family %v", got, want)
	}
	env.requireNothingCooling(t)
	if got := env.detected(t); len(got) != 1 || got[0].Protocol != "" || !got[0].RetryAt.Equal(env.clock.Now().Add(10*time.Minute)) {
		t.Fatalf("detected %+v", got)
	}

	env.mock.Reset()
	env.clock.Advance(9 * time.Minute)
	if st, _ := env.chat(t, false); st != 502 {
		t.Fatalf("within ten minutes: status %d", st)
	}
	if got := env.hits(); len(got) != 0 {
		t.Fatalf("probed again within ten minutes: %v", got)
	}
	env.clock.Advance(time.Minute)
	env.chat(t, false)
	if got := env.hits(); !sameCounts(got, want) {
		t.Fatalf("after ten minutes: hits %v, want %v", got, want)
	}
	env.requireNothingCooling(t)

	env.mock.Reset()
	b, err := os.ReadFile(env.g.File)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env.g.File, []byte(strings.Replace(string(b), "first_byte: 5s", "first_byte: 6s", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := env.g.Src.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := env.detected(t); len(got) != 0 {
		t.Fatalf("after a reload: detected %+v", got)
	}
	env.chat(t, false)
	if got := env.hits(); !sameCounts(got, want) {
		t.Fatalf("after a reload: hits %v, want %v", got, want)
	}
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
