package mockupstream

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"

	"github.com/fasthttp/websocket"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// TransportHeader is set on the record of every turn that came over the
// Responses WebSocket, with the value "websocket".
const TransportHeader = "X-Mock-Transport"

var wsUpgrader = websocket.Upgrader{}

// WebSocketDials counts the Responses WebSocket upgrades asked of the
// mock, refused ones included: a client that reuses its socket dials once.
func (s *Server) WebSocketDials() int { return int(s.sockets.Load()) }

// WebSocketsOpen counts the mock's Responses WebSockets open now.
func (s *Server) WebSocketsOpen() int { return int(s.open.Load()) }

// isSocket reports whether r upgrades the Responses path to the Responses
// WebSocket mode.
func isSocket(r *http.Request) bool {
	return websocket.IsWebSocketUpgrade(r) && strings.HasSuffix(r.URL.Path, "/responses")
}

// serveSocket speaks the Responses WebSocket mode: each response.create
// text frame is answered as the same body POSTed with stream:true would
// be (same scripts, same records), its SSE events sent one per text frame;
// an error answer becomes {"type":"error","status":N,"error":{...}}.
//
// Like OpenAI's, a socket remembers the last response it completed: a
// frame whose previous_response_id names it is served (and recorded as
// sent, with only its new items); any other id gets the 400
// previous_response_not_found error event (never with ForgetResponses).
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	s.sockets.Add(1)
	if s.opts.RefuseWebSocket > 0 {
		http.Error(w, "websocket mode not served here", s.opts.RefuseWebSocket)
		return
	}
	conn, err := wsUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.open.Add(1)
	defer s.open.Add(-1)
	defer conn.Close()
	h := r.Header.Clone()
	for _, k := range []string{"Upgrade", "Connection", "Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Extensions"} {
		h.Del(k)
	}
	h.Set(TransportHeader, "websocket")
	var last string // the id of the last response completed on this socket
	for {
		_, frame, err := conn.ReadMessage()
		if err != nil {
			return
		}
		if prev := gjson.GetBytes(frame, "previous_response_id").Str; prev != "" && (prev != last || s.opts.ForgetResponses) {
			conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"error","status":400,"error":{"type":"invalid_request_error","code":"previous_response_not_found","message":"Previous response with id '`+prev+`' not found.","param":"previous_response_id"}}`))
			continue
		}
		body, _ := sjson.DeleteBytes(frame, "type")
		body, _ = sjson.SetBytes(body, "stream", true)
		req := httptest.NewRequest(http.MethodPost, r.URL.Path, bytes.NewReader(body))
		req.Header = h.Clone()
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code >= 400 {
			e := gjson.GetBytes(rec.Body.Bytes(), "error").Raw
			if e == "" {
				e = `{"type":"server_error","message":"mock upstream error"}`
			}
			conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"error","status":`+strconv.Itoa(rec.Code)+`,"error":`+e+`}`))
			continue
		}
		for _, block := range strings.Split(rec.Body.String(), "\n\n") {
			for _, line := range strings.Split(block, "\n") {
				if d, ok := strings.CutPrefix(line, "data: "); ok && d != "[DONE]" {
					if gjson.Get(d, "type").Str == "response.completed" {
						last = gjson.Get(d, "response.id").Str
					}
					if conn.WriteMessage(websocket.TextMessage, []byte(d)) != nil {
						return
					}
				}
			}
		}
	}
}
