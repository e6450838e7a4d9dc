package admin

import (
	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/engine/responsesws"
	"github.com/ccload/ccload/internal/promtext"
)

// webSocketEngine is implemented by engines serving the Responses
// WebSocket transport.
type webSocketEngine interface{ WebSockets() *responsesws.Stats }

var (
	descWSSockets  = desc{"ccload_websocket_sockets", "Responses WebSocket sockets open now.", nil}
	descWSSessions = desc{"ccload_websocket_sessions", "Sessions (token and Session-Id, or one socket) whose transcripts ccload holds for previous_response_id.", nil}
	descWSBytes    = desc{"ccload_websocket_transcript_bytes", "Bytes of transcript those sessions hold.", nil}
	descWSTurns    = desc{"ccload_websocket_turns_total", "response.create frames served (warm-ups included).", nil}
	descWSRefused  = desc{"ccload_websocket_refused_total", "Upgrades refused by server.websockets.max_sockets or max_sockets_per_token.", nil}
)

// collectWebSockets emits the transport's stats at scrape time.
func (m *Metrics) collectWebSockets(e *promtext.Emitter) {
	s := m.srv.Load()
	if s == nil {
		return
	}
	we, ok := s.eng.(webSocketEngine)
	if !ok {
		return
	}
	st := we.WebSockets()
	e.Gauge(descWSSockets.name, descWSSockets.help, float64(st.Sockets.Load()))
	e.Gauge(descWSSessions.name, descWSSessions.help, float64(st.Sessions.Load()))
	e.Gauge(descWSBytes.name, descWSBytes.help, float64(st.TranscriptBytes.Load()))
	e.Counter(descWSTurns.name, descWSTurns.help, float64(st.Turns.Load()))
	e.Counter(descWSRefused.name, descWSRefused.help, float64(st.Refused.Load()))
}

// webSocketStatus is the transport's part of /admin/status; nil when the
// engine does not serve it.
func (s *Server) webSocketStatus() *adminapi.WebSocketStatus {
	we, ok := s.eng.(webSocketEngine)
	if !ok {
		return nil
	}
	st := we.WebSockets()
	return &adminapi.WebSocketStatus{
		Sockets: st.Sockets.Load(), Sessions: st.Sessions.Load(), TranscriptBytes: st.TranscriptBytes.Load(),
		Turns: st.Turns.Load(), Refused: st.Refused.Load(),
	}
}
