package admin

import (
	"github.com/prometheus/client_golang/prometheus"

	"ccload/adminapi"
	"ccload/engine/responsesws"
)

// webSocketEngine is implemented by engines serving the Responses
// WebSocket transport (issue 15).
type webSocketEngine interface{ WebSockets() *responsesws.Stats }

var (
	descWSSockets  = prometheus.NewDesc("ccload_websocket_sockets", "Responses WebSocket sockets open now.", nil, nil)
	descWSSessions = prometheus.NewDesc("ccload_websocket_sessions", "Sessions (token and Session-Id, or one socket) whose transcripts ccload holds for previous_response_id.", nil, nil)
	descWSBytes    = prometheus.NewDesc("ccload_websocket_transcript_bytes", "Bytes of transcript those sessions hold.", nil, nil)
	descWSTurns    = prometheus.NewDesc("ccload_websocket_turns_total", "response.create frames served (warm-ups included).", nil, nil)
	descWSRefused  = prometheus.NewDesc("ccload_websocket_refused_total", "Upgrades refused by server.websockets.max_sockets or max_sockets_per_token.", nil, nil)
)

// wsGauges reads the transport's stats at scrape time.
type wsGauges struct{ m *Metrics }

func (g wsGauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descWSSockets, descWSSessions, descWSBytes, descWSTurns, descWSRefused} {
		ch <- d
	}
}

func (g wsGauges) Collect(ch chan<- prometheus.Metric) {
	s := g.m.srv.Load()
	if s == nil {
		return
	}
	we, ok := s.eng.(webSocketEngine)
	if !ok {
		return
	}
	st := we.WebSockets()
	ch <- prometheus.MustNewConstMetric(descWSSockets, prometheus.GaugeValue, float64(st.Sockets.Load()))
	ch <- prometheus.MustNewConstMetric(descWSSessions, prometheus.GaugeValue, float64(st.Sessions.Load()))
	ch <- prometheus.MustNewConstMetric(descWSBytes, prometheus.GaugeValue, float64(st.TranscriptBytes.Load()))
	ch <- prometheus.MustNewConstMetric(descWSTurns, prometheus.CounterValue, float64(st.Turns.Load()))
	ch <- prometheus.MustNewConstMetric(descWSRefused, prometheus.CounterValue, float64(st.Refused.Load()))
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
