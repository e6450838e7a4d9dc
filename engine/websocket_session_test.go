package engine_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/ccloadtest/wait"
)

const wsOtherToken = "sk-ccload-other-token-9876543210"

// startWSWith serves wsConfig from a default mock with server.websockets
// set to bounds and a second token, "other", for wsOtherToken.
func startWSWith(t *testing.T, bounds string) (*gateway, *mockupstream.Server) {
	t.Helper()
	m, u := startMock(t, mockupstream.Options{})
	cfg := strings.ReplaceAll(wsConfig, "{{URL}}", u)
	cfg = strings.Replace(cfg, "websockets: {max_sockets_per_token: 3, max_sessions: 8}", "websockets: "+bounds, 1)
	cfg += "  - name: other\n    token_sha256: \"" + sha256hex(wsOtherToken) + "\"\n"
	return startGateway(t, cfg), m
}

// dialSession opens a socket for token with the Session-Id header session
// ("" = none).
func dialSession(t *testing.T, g *gateway, token, session string) *websocket.Conn {
	t.Helper()
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	if session != "" {
		h.Set("Session-Id", session)
	}
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(g.URL, "http")+"/v1/responses", h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func chained(prev, text string) string {
	return `{"type":"response.create","model":"r1","previous_response_id":"` + prev + `","input":"` + text + `"}`
}

func wantNotFound(t *testing.T, what string, evs []gjson.Result, id string) {
	t.Helper()
	e := last(evs)
	if e.Get("type").Str != "error" || e.Get("status").Int() != 400 || e.Get("error.type").Str != "invalid_request_error" ||
		e.Get("error.code").Str != "previous_response_not_found" || e.Get("error.param").Str != "previous_response_id" ||
		e.Get("error.message").Str != "Previous response with id '"+id+"' not found." {
		t.Errorf("%s: %s", what, e.Raw)
	}
}

// TestWebSocketSessionContinuesAcrossSockets: Codex reconnects with the
// same Session-Id and continues with previous_response_id from the old
// socket; another token with the same Session-Id, and the same token
// without it, do not see that chain.
func TestWebSocketSessionContinuesAcrossSockets(t *testing.T) {
	g, m := startWSWith(t, "{}")
	a := dialSession(t, g, testToken, "codex-sess")
	one := turn(t, a, `{"type":"response.create","model":"r1","input":"hi"}`)
	id := last(one).Get("response.id").Str
	if last(one).Get("type").Str != "response.completed" || id == "" {
		t.Fatalf("first turn: %v", one)
	}
	a.Close()

	b := dialSession(t, g, testToken, "codex-sess")
	two := turn(t, b, chained(id, "again"))
	if last(two).Get("type").Str != "response.completed" {
		t.Fatalf("second turn on a new socket of the same session: %v", two)
	}
	in := gjson.GetBytes(m.Requests()[1].Body, "input")
	if in.Get("#").Int() != 3 || in.Get("0.content.0.text").Str != "hi" || in.Get("1.role").Str != "assistant" || in.Get("2.content.0.text").Str != "again" {
		t.Errorf("second turn transcript: %s", in.Raw)
	}

	wantNotFound(t, "other token, same Session-Id", turn(t, dialSession(t, g, wsOtherToken, "codex-sess"), chained(id, "steal")), id)
	wantNotFound(t, "same token, no Session-Id", turn(t, dialSession(t, g, testToken, ""), chained(id, "x")), id)
	wantNotFound(t, "same token, other Session-Id", turn(t, dialSession(t, g, testToken, "another"), chained(id, "x")), id)
	if n := len(m.Requests()); n != 2 {
		t.Errorf("upstream requests %d: a refused chain reached the upstream", n)
	}
	// The session outlives its sockets; /admin/status and /metrics read
	// these gauges.
	if s := g.Engine.WebSockets(); s.Sessions.Load() != 1 || s.TranscriptBytes.Load() == 0 {
		t.Errorf("stats: sessions %d bytes %d", s.Sessions.Load(), s.TranscriptBytes.Load())
	}
}

// TestWebSocketSessionBounds: past max_sessions the least recently used
// session is forgotten (its ids are previous_response_not_found), and a
// socket without a session header takes its chains with it.
func TestWebSocketSessionBounds(t *testing.T) {
	g, _ := startWSWith(t, "{max_sessions: 1}")
	a := dialSession(t, g, testToken, "first")
	idA := last(turn(t, a, `{"type":"response.create","model":"r1","input":"a"}`)).Get("response.id").Str
	b := dialSession(t, g, testToken, "second")
	idB := last(turn(t, b, `{"type":"response.create","model":"r1","input":"b"}`)).Get("response.id").Str
	wantNotFound(t, "evicted session", turn(t, a, chained(idA, "more")), idA)
	if evs := turn(t, b, chained(idB, "more")); last(evs).Get("type").Str != "response.completed" {
		t.Errorf("the newest session lost its chain: %v", evs)
	}

	c := dialSession(t, g, testToken, "")
	turn(t, c, `{"type":"response.create","model":"r1","generate":false,"input":"warm"}`)
	if n := g.Engine.WebSockets().Sessions.Load(); n != 1 {
		t.Fatalf("sessions %d, want 1 (max_sessions)", n)
	}
	c.Close()
	wait.Eventually(t, 10*time.Second, "the per-socket session to go with its socket", func() bool {
		return g.Engine.WebSockets().Sockets.Load() == 2 && g.Engine.WebSockets().Sessions.Load() == 0
	})
}

// TestWebSocketTranscriptLimit: a turn whose transcript would pass
// max_transcript_bytes gets error 400 context_too_large, nothing goes
// upstream, and the socket stays usable for a new chain.
func TestWebSocketTranscriptLimit(t *testing.T) {
	g, m := startWSWith(t, "{max_transcript_bytes: 1KiB}")
	c := dialSession(t, g, testToken, "s")
	text := strings.Repeat("y", 500)
	one := turn(t, c, `{"type":"response.create","model":"r1","input":"`+text+`"}`)
	if last(one).Get("type").Str != "response.completed" {
		t.Fatalf("first turn: %v", one)
	}
	two := turn(t, c, chained(last(one).Get("response.id").Str, text))
	if e := last(two); e.Get("type").Str != "error" || e.Get("status").Int() != 400 || e.Get("error.code").Str != "context_too_large" ||
		!strings.Contains(e.Get("error.message").Str, "max_transcript_bytes") {
		t.Fatalf("over the transcript limit: %v", two)
	}
	if n := len(m.Requests()); n != 1 {
		t.Errorf("upstream requests %d, want 1", n)
	}
	three := turn(t, c, `{"type":"response.create","model":"r1","input":"fresh start"}`)
	if last(three).Get("type").Str != "response.completed" {
		t.Errorf("a new chain after the limit: %v", three)
	}
}

// TestWebSocketPingPong: ccload pings every ping_interval and answers the
// client's ping with a pong carrying its payload.
func TestWebSocketPingPong(t *testing.T) {
	g, _ := startWSWith(t, "{ping_interval: 50ms}")
	c := dialSession(t, g, testToken, "")
	pinged, ponged := make(chan struct{}), make(chan string, 1)
	var once sync.Once
	c.SetPingHandler(func(data string) error {
		once.Do(func() { close(pinged) })
		return c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	c.SetPongHandler(func(data string) error {
		select {
		case ponged <- data:
		default:
		}
		return nil
	})
	// Control frames are handled inside reads: keep one pending.
	go func() {
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}()
	if err := c.WriteControl(websocket.PingMessage, []byte("are you there"), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-ponged:
		if got != "are you there" {
			t.Errorf("pong payload %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no pong to the client's ping")
	}
	select {
	case <-pinged:
	case <-time.After(10 * time.Second):
		t.Fatal("ccload sent no ping")
	}
}

// TestWebSocketIdleClose: a socket that sends no frame for idle_ttl is
// closed with 1001 (going away), saying why.
func TestWebSocketIdleClose(t *testing.T) {
	g, _ := startWSWith(t, "{idle_ttl: 200ms}")
	c := dialSession(t, g, testToken, "")
	if evs := turn(t, c, `{"type":"response.create","model":"r1","input":"hi"}`); last(evs).Get("type").Str != "response.completed" {
		t.Fatalf("turn: %v", evs)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err := c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway || !strings.Contains(ce.Text, "idle_ttl") {
		t.Fatalf("after idling: %v, want close 1001", err)
	}
}

// TestWebSocketNativeRefusedFallsBack: an upstream that refuses the
// upgrade (426) serves the turn over HTTP/SSE with no error for the
// client, and the next turn does not ask it again.
func TestWebSocketNativeRefusedFallsBack(t *testing.T) {
	m, u := startMock(t, mockupstream.Options{RefuseWebSocket: 426})
	g := startGateway(t, `version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: "{{DB}}"}
channels:
  - name: native
    websockets: true
    urls: [{url: "`+u+`", protocols: [responses]}]
    keys: [key-native-00000]
    models: [n1]
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
`)
	c := dialSession(t, g, testToken, "s")
	one := turn(t, c, `{"type":"response.create","model":"n1","input":"hi"}`)
	two := turn(t, c, strings.Replace(chained(last(one).Get("response.id").Str, "again"), `"r1"`, `"n1"`, 1))
	for i, evs := range [][]gjson.Result{one, two} {
		if last(evs).Get("type").Str != "response.completed" || texts(evs) != mockupstream.DefaultText {
			t.Fatalf("turn %d: %v", i+1, evs)
		}
	}
	if n := m.WebSocketDials(); n != 1 {
		t.Errorf("upgrade asked %d times, want 1 (the refusal is remembered)", n)
	}
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("upstream requests %d", len(reqs))
	}
	for _, r := range reqs {
		if r.Header.Get(mockupstream.TransportHeader) != "" || !r.Stream {
			t.Errorf("turn did not go over HTTP/SSE: transport %q stream %v", r.Header.Get(mockupstream.TransportHeader), r.Stream)
		}
	}
	rows := g.waitLogs(t, 2)
	notes := rows[1].AttemptsJSON + rows[0].AttemptsJSON
	if !strings.Contains(notes, "websocket upstream refused (") || !strings.Contains(notes, "refused the upgrade earlier") {
		t.Errorf("attempt notes: %s", notes)
	}
}

// startSlowWS serves wsConfig from a mock whose Responses streams wait
// delay between events, so a turn lasts long enough to act during it.
func startSlowWS(t *testing.T, delay time.Duration) (*gateway, *mockupstream.Server) {
	t.Helper()
	m, u := startMock(t, mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		rep := mockupstream.DefaultReply(r)
		rep.EventDelay = delay
		return rep
	}})
	return startGateway(t, strings.ReplaceAll(wsConfig, "{{URL}}", u)), m
}

// TestWebSocketPingDuringTurn: a ping the client sends while a turn is
// streaming is answered at once, not when the turn ends, and a second
// response.create sent during the first turn is served after it.
func TestWebSocketPingDuringTurn(t *testing.T) {
	g, m := startSlowWS(t, 150*time.Millisecond)
	c := dialSession(t, g, testToken, "")
	var mu sync.Mutex
	var seen []string // event types and "pong", in arrival order
	note := func(s string) { mu.Lock(); seen = append(seen, s); mu.Unlock() }
	c.SetPongHandler(func(data string) error { note("pong " + data); return nil })
	done := make(chan error, 1)
	go func() {
		completed := 0
		for completed < 2 {
			c.SetReadDeadline(time.Now().Add(20 * time.Second))
			_, b, err := c.ReadMessage()
			if err != nil {
				done <- err
				return
			}
			typ := gjson.GetBytes(b, "type").Str
			note(typ)
			if typ == "response.completed" {
				completed++
			}
		}
		done <- nil
	}()
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"type":"response.create","model":"r1","input":"one"}`)); err != nil {
		t.Fatal(err)
	}
	// Wait until output is flowing, then ping and queue the next turn.
	wait.Eventually(t, 10*time.Second, "three frames of output", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) >= 3
	})
	if err := c.WriteControl(websocket.PingMessage, []byte("mid-turn"), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"type":"response.create","model":"r1","input":"two"}`)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("reading: %v (seen %v)", err, seen)
	}
	mu.Lock()
	defer mu.Unlock()
	pong, first := slices.Index(seen, "pong mid-turn"), slices.Index(seen, "response.completed")
	if pong < 0 || first < 0 || pong > first {
		t.Errorf("the pong came at %d, the first turn completed at %d: %v", pong, first, seen)
	}
	if n := len(m.Requests()); n != 2 {
		t.Errorf("upstream requests %d, want 2 (the queued turn served after the first)", n)
	}
}

// TestWebSocketCloseDuringTurnCancelsUpstream: a client that closes its
// socket mid-turn cancels the upstream stream at once, as a dropped HTTP
// client does, and the turn's row says the client went away.
func TestWebSocketCloseDuringTurnCancelsUpstream(t *testing.T) {
	g, _ := startSlowWS(t, 300*time.Millisecond)
	c := dialSession(t, g, testToken, "")
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"type":"response.create","model":"r1","input":"one"}`)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // created, in_progress: the turn is streaming
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, _, err := c.ReadMessage(); err != nil {
			t.Fatal(err)
		}
	}
	c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye"), time.Now().Add(time.Second))
	rows := g.waitLogs(t, 1)
	if rows[0].Status != 499 || !rows[0].Incomplete {
		t.Errorf("row: status %d incomplete %v, want 499 incomplete", rows[0].Status, rows[0].Incomplete)
	}
}
