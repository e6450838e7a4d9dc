package responsesws

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/tidwall/gjson"

	"ccload/config"
	"ccload/protocol"
)

// Result is how the engine served one turn: a Responses SSE body when the
// turn streams, else the HTTP status and body it answered (an error, or a
// whole JSON response).
type Result struct {
	Status int
	Body   []byte
	Stream io.ReadCloser
}

// Options wire one socket.
type Options struct {
	Bounds config.WebSockets
	// MaxFrame is server.max_body_bytes: a larger frame closes the socket
	// with 1009 (message too big) and is never served.
	MaxFrame int64
	// Turn serves one turn's HTTP body through the engine's request path.
	Turn  func(body []byte) Result
	Stats *Stats
	// Sessions is the engine's store of response chains; Token (the
	// client token's name) and SessionID (the Session-Id, else Thread-Id
	// header; "" = none) pick this socket's session in it.
	Sessions  *Sessions
	Token     string
	SessionID string
	// WriteTimeout bounds each frame write (server.stream_write_timeout).
	WriteTimeout time.Duration
	// Now is the engine clock: response timestamps and session_ttl.
	// Socket deadlines (idle_ttl, pings) are the network's, on wall time.
	Now func() time.Time
}

// Close codes (RFC 6455 §7.4.1).
const (
	closeGoingAway = websocket.CloseGoingAway         // 1001
	closeTooBig    = websocket.CloseMessageTooBig     // 1009
	closeInternal  = websocket.CloseInternalServerErr // 1011
)

// Serve runs one downstream socket until the client closes it, it sends no
// frame for idle_ttl (close 1001), a frame is too big (1009) or a turn
// fails after output reached the client (1011). Turns run one at a time,
// in frame order; the client's pings are answered while ccload waits for
// the next frame (a ping sent during a turn is answered when it ends).
func Serve(conn *websocket.Conn, o Options) {
	if o.Now == nil {
		o.Now = time.Now
	}
	key := SessionKey(o.Token, o.SessionID)
	if o.SessionID == "" {
		// No session header: the chains are this socket's alone.
		key = SessionKey(o.Token, "socket "+newID())
		defer o.Sessions.Drop(key)
	}
	s := &socket{conn: conn, o: o, key: key}
	o.Stats.Sockets.Add(1)
	defer o.Stats.Sockets.Add(-1)
	defer conn.Close()

	if o.MaxFrame > 0 {
		conn.SetReadLimit(o.MaxFrame)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.ping(stop) }()
	defer wg.Wait()
	defer close(stop)

	idle := o.Bounds.IdleTTL.D()
	for {
		if idle > 0 {
			conn.SetReadDeadline(time.Now().Add(idle))
		}
		mt, frame, err := conn.ReadMessage()
		if err != nil {
			var ne net.Error
			switch {
			case errors.Is(err, websocket.ErrReadLimit):
				// The library sent close 1009 already; read the rest of
				// the frame away so closing does not reset the connection
				// before the client has read that close.
				drain(conn.NetConn())
			case errors.As(err, &ne) && ne.Timeout():
				s.closeWith(closeGoingAway, "idle past server.websockets.idle_ttl")
			}
			return
		}
		if mt != websocket.TextMessage {
			s.send(ownError(&turnError{status: 400, code: "invalid_frame", message: "response.create must come as a text frame"}))
			continue
		}
		o.Stats.Turns.Add(1)
		if !s.turn(frame) {
			return
		}
	}
}

type socket struct {
	conn *websocket.Conn
	o    Options
	key  string // the session in o.Sessions
	werr error
}

func (s *socket) ping(stop <-chan struct{}) {
	every := s.o.Bounds.PingInterval.D()
	if every <= 0 {
		every = 30 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			// WriteControl may run concurrently with the turn's writes.
			if s.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(10*time.Second)) != nil {
				return
			}
		}
	}
}

// send writes one text frame; after a failed write it does nothing.
func (s *socket) send(b []byte) bool {
	if s.werr != nil {
		return false
	}
	if s.o.WriteTimeout > 0 {
		s.conn.SetWriteDeadline(time.Now().Add(s.o.WriteTimeout))
	}
	s.werr = s.conn.WriteMessage(websocket.TextMessage, b)
	return s.werr == nil
}

// fail sends the error event and closes with 1011: output already went
// out, so nothing can be retried.
func (s *socket) fail(ev []byte) {
	s.send(ev)
	s.closeWith(closeInternal, "upstream failed after output")
}

// closeWith sends the close frame; the caller then closes the connection.
func (s *socket) closeWith(code int, reason string) {
	s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(5*time.Second))
}

// turn serves one response.create; false ends the socket.
func (s *socket) turn(frame []byte) bool {
	c, te := parseCreate(frame)
	if te != nil {
		return s.send(ownError(te))
	}
	items := c.input
	if c.prev != "" {
		prev, ok := s.o.Sessions.get(s.o.Bounds, s.key, c.prev, s.o.Now())
		if !ok {
			return s.send(ownError(notFound(c.prev)))
		}
		items = append(append(make([][]byte, 0, len(prev)+len(c.input)), prev...), c.input...)
	}
	if max := int64(s.o.Bounds.MaxTranscriptBytes); max > 0 && size(items) > max {
		return s.send(ownError(&turnError{status: 400, code: "context_too_large",
			message: "the conversation's transcript is over server.websockets.max_transcript_bytes; start a new chain (no previous_response_id)"}))
	}
	if !c.generate {
		return s.warmUp(c, items)
	}
	res := s.o.Turn(withInput(c.body, items))
	if res.Stream == nil {
		if res.Status >= 200 && res.Status < 300 && gjson.GetBytes(res.Body, "id").Str != "" {
			// A whole JSON answer (the upstream did not stream).
			s.remember(gjson.GetBytes(res.Body, "id").Str, items, gjson.GetBytes(res.Body, "output"))
			return s.send(append(append([]byte(`{"type":"response.completed","response":`), res.Body...), '}'))
		}
		return s.send(errorFromBody(res.Status, res.Body))
	}
	defer res.Stream.Close()
	rd := protocol.NewReader(res.Stream, 0)
	terminal := false
	for {
		ev, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) || !terminal {
				s.fail(errorFrame(502, "server_error", "", "the upstream stream ended before the response finished", gjson.Result{}))
				return false
			}
			return s.werr == nil
		}
		if ev.IsDone() || len(ev.Data) == 0 {
			continue
		}
		switch gjson.GetBytes(ev.Data, "type").Str {
		case "error":
			// Only sent once output went out (the engine fails over
			// before that): the turn cannot be retried.
			s.fail(errorFromEvent(502, ev.Data))
			return false
		case "response.completed", "response.incomplete":
			terminal = true
			r := gjson.GetBytes(ev.Data, "response")
			s.remember(r.Get("id").Str, items, r.Get("output"))
		case "response.failed":
			terminal = true
		}
		if !s.send(ev.Data) {
			return false
		}
	}
}

// remember keeps the transcript behind a finished response: its input and
// its output items, for a later previous_response_id.
func (s *socket) remember(id string, items [][]byte, output gjson.Result) {
	if id == "" {
		return
	}
	all := append(make([][]byte, 0, len(items)+4), items...)
	for _, it := range output.Array() {
		all = append(all, []byte(it.Raw))
	}
	s.o.Sessions.Put(s.o.Bounds, s.key, s.o.Token, id, all, s.o.Now())
}

// warmUp answers generate:false with a response that has no output and
// calls no upstream; its input is remembered so the next turn can chain
// on its id.
func (s *socket) warmUp(c create, items [][]byte) bool {
	id := newID()
	s.o.Sessions.Put(s.o.Bounds, s.key, s.o.Token, id, items, s.o.Now())
	now := s.o.Now().Unix()
	return s.send(lifecycle("response.created", id, c.model, "in_progress", now, 0)) &&
		s.send(lifecycle("response.in_progress", id, c.model, "in_progress", now, 1)) &&
		s.send(lifecycle("response.completed", id, c.model, "completed", now, 2))
}

// drain half-closes the connection and discards what the client still
// sends, for a few seconds at most.
func drain(c net.Conn) {
	if hc, ok := c.(interface{ CloseWrite() error }); ok {
		hc.CloseWrite()
	}
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	io.Copy(io.Discard, c)
}

func newID() string {
	var b [12]byte
	rand.Read(b[:])
	return "resp_ccload_" + hex.EncodeToString(b[:])
}
