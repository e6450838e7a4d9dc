package engine_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/ccloadtest/wait"
	"github.com/ccload/ccload/store"
)

// wsConfig serves r1 from a Responses channel, a1 from an Anthropic one,
// f1 from a failing channel before a good one, c1 from a channel whose
// stream breaks after output before a good one.
const wsConfig = `version: 1
server:
  admin_password: test
  max_body_bytes: 4KiB
  websockets: {max_sockets_per_token: 3, max_sessions: 8}
storage: {driver: sqlite, dsn: "{{DB}}"}
channels:
  - name: resp
    priority: 10
    urls: [{url: "{{URL}}", protocols: [responses]}]
    keys: [key-resp-000000]
    models: [r1]
  - name: anth
    priority: 10
    urls: [{url: "{{URL}}", protocols: [anthropic]}]
    keys: [key-anth-000000]
    models: [a1]
  - name: bad
    priority: 10
    urls: [{url: "{{URL}}", protocols: [responses]}]
    keys: [key-bad-0000000]
    models: [f1, c1]
  - name: good
    priority: 5
    urls: [{url: "{{URL}}", protocols: [responses]}]
    keys: [key-good-000000]
    models: [f1, c1]
  - name: native
    priority: 10
    websockets: true
    urls: [{url: "{{URL}}", protocols: [responses]}]
    keys: [key-native-00000]
    models: [n1]
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
`

func startWS(t *testing.T) (*gateway, *mockupstream.Server) {
	t.Helper()
	m, u := startMock(t, mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		switch {
		case r.Key == "key-bad-0000000" && r.Model == "f1":
			return mockupstream.Reply{Status: 500}
		case r.Key == "key-bad-0000000" && r.Model == "c1":
			// created, in_progress, item added, part added, first delta,
			// then the connection drops: output already went out.
			return mockupstream.Reply{Text: "partial answer that breaks", CutAfterEvents: 5}
		}
		return mockupstream.DefaultReply(r)
	}})
	return startGateway(t, strings.ReplaceAll(wsConfig, "{{URL}}", u)), m
}

func dialWS(t *testing.T, g *gateway, token string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	h.Set("OpenAI-Beta", "responses_websockets=2026-02-06")
	h.Set("Session-Id", "sess-1")
	c, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(g.URL, "http")+"/v1/responses", h)
	if c != nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, resp, err
}

// turn sends one frame and reads events until the turn's terminal event
// (or an error event), returning them.
func turn(t *testing.T, c *websocket.Conn, frame string) []gjson.Result {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	var out []gjson.Result
	for {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		mt, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		if mt != websocket.TextMessage {
			t.Fatalf("frame type %d", mt)
		}
		ev := gjson.ParseBytes(b)
		out = append(out, ev)
		switch ev.Get("type").Str {
		case "response.completed", "response.failed", "response.incomplete", "error":
			return out
		}
	}
}

func last(evs []gjson.Result) gjson.Result { return evs[len(evs)-1] }

func texts(evs []gjson.Result) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Get("type").Str == "response.output_text.delta" {
			b.WriteString(ev.Get("delta").Str)
		}
	}
	return b.String()
}

func TestWebSocketWarmUpThenChainedTurns(t *testing.T) {
	g, m := startWS(t)
	c, _, err := dialWS(t, g, testToken)
	if err != nil {
		t.Fatal(err)
	}
	warm := turn(t, c, `{"type":"response.create","model":"r1","generate":false,"stream":true,"store":false,
		"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"be brief"}]}]}`)
	if len(warm) != 3 || warm[0].Get("type").Str != "response.created" || warm[1].Get("type").Str != "response.in_progress" ||
		last(warm).Get("type").Str != "response.completed" || last(warm).Get("response.output.#").Int() != 0 {
		t.Fatalf("warm-up events: %v", warm)
	}
	if n := len(m.Requests()); n != 0 {
		t.Fatalf("warm-up reached the upstream %d times", n)
	}
	warmID := last(warm).Get("response.id").Str

	one := turn(t, c, `{"type":"response.create","model":"r1","stream":true,"store":false,"previous_response_id":"`+warmID+`",
		"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`)
	if last(one).Get("type").Str != "response.completed" || texts(one) != mockupstream.DefaultText {
		t.Fatalf("first turn: %v", one)
	}
	reqs := m.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream requests: %d", len(reqs))
	}
	body := gjson.ParseBytes(reqs[0].Body)
	for _, k := range []string{"type", "generate", "previous_response_id"} {
		if body.Get(k).Exists() {
			t.Errorf("upstream body carries %q: %s", k, reqs[0].Body)
		}
	}
	if body.Get("input.#").Int() != 2 || body.Get("input.0.role").Str != "developer" || body.Get("input.1.role").Str != "user" {
		t.Errorf("first turn input is not warm-up + new items: %s", body.Get("input").Raw)
	}
	if reqs[0].Key != "key-resp-000000" || strings.Contains(reqs[0].Header.Get("Authorization"), testToken) {
		t.Errorf("upstream credential: key %q auth %q", reqs[0].Key, reqs[0].Header.Get("Authorization"))
	}

	id1 := last(one).Get("response.id").Str
	two := turn(t, c, `{"type":"response.create","model":"r1","previous_response_id":"`+id1+`","input":"again"}`)
	if last(two).Get("type").Str != "response.completed" {
		t.Fatalf("second turn: %v", two)
	}
	in := gjson.GetBytes(m.Requests()[1].Body, "input")
	if in.Get("#").Int() != 4 || in.Get("2.role").Str != "assistant" || in.Get("3.content.0.text").Str != "again" {
		t.Errorf("second turn transcript: %s", in.Raw)
	}

	// An unknown id is an error event; the socket stays usable.
	bad := turn(t, c, `{"type":"response.create","model":"r1","previous_response_id":"resp_nope","input":"x"}`)
	if e := last(bad); e.Get("type").Str != "error" || e.Get("status").Int() != 400 || e.Get("error.code").Str != "previous_response_not_found" {
		t.Errorf("unknown previous id: %v", bad)
	}

	// A row per turn, the warm-up's included: it is admitted and logged
	// like a turn, with no channel since no upstream saw it.
	rows := g.waitLogs(t, 3)
	if len(rows) != 3 {
		t.Fatalf("log rows: %d, want one per turn, warm-up included", len(rows))
	}
	if warm := rows[len(rows)-1]; warm.Status != 200 || warm.Channel != "" || warm.Cost != 0 {
		t.Errorf("warm-up row: status %d channel %q cost %v", warm.Status, warm.Channel, warm.Cost)
	}
	for _, r := range rows[:2] {
		if r.Status != 200 || r.Channel != "resp" || !strings.Contains(r.AttemptsJSON, "transport: websocket") {
			t.Errorf("row: status %d channel %q attempts %s", r.Status, r.Channel, r.AttemptsJSON)
		}
	}
	// One session (Session-Id sess-1) holding the three chains.
	if s := g.Engine.WebSockets(); s.Sockets.Load() != 1 || s.Sessions.Load() != 1 || s.TranscriptBytes.Load() == 0 {
		t.Errorf("stats: sockets %d sessions %d bytes %d", s.Sockets.Load(), s.Sessions.Load(), s.TranscriptBytes.Load())
	}
}

func TestWebSocketConvertsToAnthropic(t *testing.T) {
	g, m := startWS(t)
	c, _, err := dialWS(t, g, testToken)
	if err != nil {
		t.Fatal(err)
	}
	evs := turn(t, c, `{"type":"response.create","model":"a1","stream":true,"store":false,"input":"hi"}`)
	if last(evs).Get("type").Str != "response.completed" || texts(evs) != mockupstream.DefaultText {
		t.Fatalf("events: %v", evs)
	}
	reqs := m.Requests()
	if len(reqs) != 1 || reqs[0].Family != mockupstream.Anthropic || gjson.GetBytes(reqs[0].Body, "type").Exists() {
		t.Fatalf("upstream: %+v", reqs)
	}
	rows := g.waitLogs(t, 1)
	if rows[0].UpstreamProtocol != "anthropic" || rows[0].ClientProtocol != "responses" {
		t.Errorf("row: %+v", rows[0])
	}
}

func TestWebSocketFailsOverBeforeOutput(t *testing.T) {
	g, m := startWS(t)
	c, _, err := dialWS(t, g, testToken)
	if err != nil {
		t.Fatal(err)
	}
	evs := turn(t, c, `{"type":"response.create","model":"f1","input":"hi"}`)
	if last(evs).Get("type").Str != "response.completed" || texts(evs) != mockupstream.DefaultText {
		t.Fatalf("events: %v", evs)
	}
	reqs := m.Requests()
	if len(reqs) != 2 || reqs[0].Key != "key-bad-0000000" || reqs[1].Key != "key-good-000000" {
		t.Fatalf("attempts: %d", len(reqs))
	}
	rows := g.waitLogs(t, 1)
	if len(rows) != 1 || rows[0].Channel != "good" || rows[0].Attempts != 2 {
		t.Errorf("row: %+v", rows[0])
	}
}

func TestWebSocketNoFailoverAfterOutput(t *testing.T) {
	g, m := startWS(t)
	c, _, err := dialWS(t, g, testToken)
	if err != nil {
		t.Fatal(err)
	}
	evs := turn(t, c, `{"type":"response.create","model":"c1","input":"hi"}`)
	if e := last(evs); e.Get("type").Str != "error" || e.Get("status").Int() != 502 || e.Get("error.message").Str == "" {
		t.Fatalf("events: %v", evs)
	}
	if texts(evs) == "" {
		t.Errorf("no output reached the client before the break: %v", evs)
	}
	_, _, err = c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseInternalServerErr {
		t.Fatalf("close: %v, want 1011", err)
	}
	if n := len(m.Requests()); n != 1 {
		t.Errorf("upstream requests: %d, want 1 (no failover after output)", n)
	}
	rows := g.waitLogs(t, 1)
	if len(rows) != 1 || !rows[0].Incomplete || rows[0].Channel != "bad" {
		t.Errorf("row: %+v", rows[0])
	}
}

func TestWebSocketOversizedFrameCloses1009(t *testing.T) {
	g, m := startWS(t)
	c, _, err := dialWS(t, g, testToken)
	if err != nil {
		t.Fatal(err)
	}
	big := `{"type":"response.create","model":"r1","input":"` + strings.Repeat("x", 8<<10) + `"}`
	if err := c.WriteMessage(websocket.TextMessage, []byte(big)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err = c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseMessageTooBig {
		t.Fatalf("close: %v, want 1009", err)
	}
	if n := len(m.Requests()); n != 0 {
		t.Errorf("upstream requests: %d", n)
	}
}

func TestWebSocketUpgradeNeedsToken(t *testing.T) {
	g, m := startWS(t)
	_, resp, err := dialWS(t, g, "")
	if err == nil || resp == nil || resp.StatusCode != 401 {
		t.Fatalf("upgrade without token: err %v resp %v", err, resp)
	}
	_, resp, err = dialWS(t, g, "sk-wrong-token")
	if err == nil || resp == nil || resp.StatusCode != 401 {
		t.Fatalf("upgrade with a wrong token: err %v resp %v", err, resp)
	}
	if n := len(m.Requests()); n != 0 {
		t.Errorf("upstream requests: %d", n)
	}
	rows, err := g.Store.QueryLogs(context.Background(), store.LogQuery{Limit: 10})
	if err != nil || len(rows) != 0 {
		t.Errorf("rows %d err %v", len(rows), err)
	}
}

func TestWebSocketSocketsPerToken(t *testing.T) {
	g, _ := startWS(t)
	for i := 0; i < 3; i++ {
		if _, _, err := dialWS(t, g, testToken); err != nil {
			t.Fatal(err)
		}
	}
	_, resp, err := dialWS(t, g, testToken)
	if err == nil || resp == nil || resp.StatusCode != 429 {
		t.Fatalf("4th socket: err %v resp %v", err, resp)
	}
	if g.Engine.WebSockets().Refused.Load() != 1 {
		t.Errorf("refused count %d", g.Engine.WebSockets().Refused.Load())
	}
}

func TestWebSocketNativeUpstream(t *testing.T) {
	g, m := startWS(t)
	c, _, err := dialWS(t, g, testToken)
	if err != nil {
		t.Fatal(err)
	}
	one := turn(t, c, `{"type":"response.create","model":"n1","stream":true,"store":false,"input":"hi"}`)
	if last(one).Get("type").Str != "response.completed" || texts(one) != mockupstream.DefaultText {
		t.Fatalf("first turn: %v", one)
	}
	two := turn(t, c, `{"type":"response.create","model":"n1","previous_response_id":"`+last(one).Get("response.id").Str+`","input":"again"}`)
	if last(two).Get("type").Str != "response.completed" {
		t.Fatalf("second turn: %v", two)
	}
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("upstream requests: %d", len(reqs))
	}
	for _, r := range reqs {
		if r.Header.Get(mockupstream.TransportHeader) != "websocket" || r.Key != "key-native-00000" {
			t.Errorf("turn reached the upstream over %q with key %q", r.Header.Get(mockupstream.TransportHeader), r.Key)
		}
	}
	// The upstream socket produced the first turn itself: the second continues it by
	// id with only the new item, not the replayed transcript.
	if n, prev := gjson.GetBytes(reqs[1].Body, "input.#").Int(), gjson.GetBytes(reqs[1].Body, "previous_response_id").Str; n != 1 || prev != last(one).Get("response.id").Str {
		t.Errorf("second turn went up with %d items and previous_response_id %q, want 1 and %q: %s", n, prev, last(one).Get("response.id").Str, reqs[1].Body)
	}
	// Both turns went over one upstream socket, closed with the client's.
	if n := m.WebSocketDials(); n != 1 {
		t.Errorf("upstream socket dialed %d times for two turns, want 1", n)
	}
	c.Close()
	wait.Eventually(t, 10*time.Second, "the upstream socket to close with the downstream one", func() bool { return m.WebSocketsOpen() == 0 })
	rows := g.waitLogs(t, 2)
	for _, r := range rows {
		if r.Status != 200 || r.Channel != "native" || strings.Contains(r.AttemptsJSON, "HTTP/SSE used") {
			t.Errorf("row: status %d channel %q attempts %s", r.Status, r.Channel, r.AttemptsJSON)
		}
	}
}

// TestWebSocketNativeUpstreamForgotResponse: an upstream socket that
// answers the chained turn with previous_response_not_found gets the whole
// transcript on the same socket, and the client sees no error.
func TestWebSocketNativeUpstreamForgotResponse(t *testing.T) {
	m, u := startMock(t, mockupstream.Options{ForgetResponses: true})
	g := startGateway(t, strings.ReplaceAll(wsConfig, "{{URL}}", u))
	c, _, err := dialWS(t, g, testToken)
	if err != nil {
		t.Fatal(err)
	}
	one := turn(t, c, `{"type":"response.create","model":"n1","input":"hi"}`)
	two := turn(t, c, `{"type":"response.create","model":"n1","previous_response_id":"`+last(one).Get("response.id").Str+`","input":"again"}`)
	if last(two).Get("type").Str != "response.completed" || texts(two) != mockupstream.DefaultText {
		t.Fatalf("second turn: %v", two)
	}
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("upstream requests served: %d, want 2", len(reqs))
	}
	if n, prev := gjson.GetBytes(reqs[1].Body, "input.#").Int(), gjson.GetBytes(reqs[1].Body, "previous_response_id"); n != 3 || prev.Exists() {
		t.Errorf("the retry went up with %d items (want the 3 of the transcript) and previous_response_id %s: %s", n, prev.Raw, reqs[1].Body)
	}
	if n := m.WebSocketDials(); n != 1 {
		t.Errorf("upstream dials %d, want 1 (the retry uses the same socket)", n)
	}
}

// TestWebSocketNativeUpstreamDebugCapture: a debug capture of a turn over
// a native upstream socket records the response too (the socket's events
// as the stream the relay read), not only the request.
func TestWebSocketNativeUpstreamDebugCapture(t *testing.T) {
	_, u := startMock(t, mockupstream.Options{})
	cfg := strings.Replace(strings.ReplaceAll(wsConfig, "{{URL}}", u), "    websockets: true\n", "    websockets: true\n    debug: true\n", 1)
	g := startGateway(t, cfg)
	c, _, err := dialWS(t, g, testToken)
	if err != nil {
		t.Fatal(err)
	}
	if evs := turn(t, c, `{"type":"response.create","model":"n1","input":"hi"}`); last(evs).Get("type").Str != "response.completed" {
		t.Fatalf("turn: %v", evs)
	}
	rows := g.waitLogs(t, 1)
	full, err := g.Store.GetLog(t.Context(), rows[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	resp := gjson.Get(full.Debug, "exchanges.0.response")
	if resp.Get("status").Int() != 200 || !strings.Contains(resp.Get("body").Str, "response.completed") {
		t.Errorf("captured response: %s (debug %s)", resp.Raw, full.Debug)
	}
}
