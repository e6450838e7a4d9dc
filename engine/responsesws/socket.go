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

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/protocol"
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
	// Turn serves one turn's HTTP body through the engine's request path;
	// chain says which part of its input replays an earlier response.
	Turn func(body []byte, chain Chain) Result
	// WarmUp admits a warm-up (generate: false) the way Turn admits a
	// turn (the token's models and limits, a log row) without calling an
	// upstream: a Status of 200 lets the socket answer it, any other is
	// sent as the error. nil answers every warm-up.
	WarmUp func(body []byte) Result
	Stats  *Stats
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

// Chain tells the engine which response a turn continues: its input's
// first Replayed items are the transcript of response Prev. An upstream
// WebSocket that produced Prev itself still holds it (OpenAI's WebSocket
// mode keeps the last response in memory on the open socket, store:false
// included), so the turn can go up as previous_response_id plus the new
// items instead of the whole transcript. Zero for a turn that starts a
// chain.
type Chain struct {
	Prev     string
	Replayed int
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
// in frame order. One goroutine reads the socket all along, so the
// client's pings are answered at once, during a turn too; frames that
// arrive while a turn runs wait their turn (at most queued of them, then
// the reader waits too). A socket that closes or breaks during a turn
// cancels it, as a dropped HTTP client does.
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

	if o.MaxFrame > 0 {
		conn.SetReadLimit(o.MaxFrame)
	}
	stop := make(chan struct{})
	frames := make(chan inbound, queued)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.ping(stop) }()
	go func() { defer wg.Done(); s.read(frames, stop) }()
	defer func() {
		close(stop)
		conn.Close() // ends the reader's ReadMessage
		wg.Wait()
	}()

	idle := o.Bounds.IdleTTL.D()
	var timer *time.Timer
	if idle > 0 {
		timer = time.NewTimer(idle)
		defer timer.Stop()
	}
	for {
		var in inbound
		if timer != nil {
			// idle_ttl counts from the end of the last turn: a long turn
			// is not idleness.
			timer.Reset(idle)
			select {
			case in = <-frames:
			case <-timer.C:
				s.closeWith(closeGoingAway, "idle past server.websockets.idle_ttl")
				return
			}
		} else {
			in = <-frames
		}
		if in.err != nil {
			return
		}
		if in.mt != websocket.TextMessage {
			s.send(ownError(&turnError{status: 400, code: "invalid_frame", message: "response.create must come as a text frame"}))
			continue
		}
		o.Stats.Turns.Add(1)
		if !s.turn(in.data) {
			return
		}
	}
}

// queued is how many frames may wait while a turn runs before the reader
// stops reading (and so stops answering pings) until the turn ends. Codex
// sends one turn at a time; the bound only holds back a client that
// pipelines, at up to queued+1 frames of max_body_bytes in memory.
const queued = 2

// inbound is one frame read from the client, or the error that ended the
// socket.
type inbound struct {
	mt   int
	data []byte
	err  error
}

// read reads frames until the socket fails or closes; control frames
// (ping, pong, close) are handled inside ReadMessage by the library's
// handlers, which is why the socket must always be read. The error that
// ends it first cancels a turn in progress, then is handed on.
func (s *socket) read(frames chan<- inbound, stop <-chan struct{}) {
	for {
		mt, data, err := s.readFrame()
		if err != nil {
			s.abort()
			if errors.Is(err, websocket.ErrReadLimit) || errors.Is(err, errInflatedTooBig) {
				// The library sent close 1009 already; read the rest of
				// the frame away so closing does not reset the connection
				// before the client has read that close.
				drain(s.conn.NetConn())
			}
		}
		select {
		case frames <- inbound{mt: mt, data: data, err: err}:
		case <-stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// errInflatedTooBig ends a socket whose frame inflates past MaxFrame.
var errInflatedTooBig = errors.New("frame larger than server.max_body_bytes once inflated")

// readFrame reads one message, bounded by MaxFrame after inflation. The
// library's read limit (SetReadLimit) counts the bytes on the wire, which
// with permessage-deflate are the compressed ones: a frame under the limit
// could inflate a thousandfold. Here the inflating reader is read for at
// most MaxFrame+1 bytes, so neither memory nor time exceeds what one
// uncompressed frame at the limit costs; one byte more closes with 1009.
func (s *socket) readFrame() (int, []byte, error) {
	mt, r, err := s.conn.NextReader()
	if err != nil {
		return mt, nil, err
	}
	if s.o.MaxFrame <= 0 {
		data, err := io.ReadAll(r)
		return mt, data, err
	}
	data, err := io.ReadAll(io.LimitReader(r, s.o.MaxFrame+1))
	if err == nil && int64(len(data)) > s.o.MaxFrame {
		msg := websocket.FormatCloseMessage(closeTooBig, "frame over server.max_body_bytes once inflated")
		s.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(5*time.Second))
		return mt, nil, errInflatedTooBig
	}
	return mt, data, err
}

// track makes stream the turn a broken socket cancels; false when the
// socket broke already (the caller closes stream).
func (s *socket) track(stream io.Closer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return false
	}
	s.cur = stream
	return true
}

func (s *socket) untrack() {
	s.mu.Lock()
	s.cur = nil
	s.mu.Unlock()
}

// abort marks the socket gone and closes the running turn's stream: the
// relay's next write fails, the upstream is cancelled and the row says the
// client went away.
func (s *socket) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gone = true
	if s.cur != nil {
		s.cur.Close()
		s.cur = nil
	}
}

type socket struct {
	conn *websocket.Conn
	o    Options
	key  string // the session in o.Sessions
	werr error

	mu   sync.Mutex
	cur  io.Closer // the running turn's stream, nil between turns
	gone bool      // the reader saw the socket end
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
		if s.o.WarmUp != nil {
			if res := s.o.WarmUp(withInput(c.body, items)); res.Status != 200 {
				return s.send(errorFromBody(res.Status, res.Body))
			}
		}
		return s.warmUp(c, items)
	}
	res := s.o.Turn(withInput(c.body, items), Chain{Prev: c.prev, Replayed: len(items) - len(c.input)})
	if res.Stream == nil {
		if res.Status >= 200 && res.Status < 300 && gjson.GetBytes(res.Body, "id").Str != "" {
			// A whole JSON answer (the upstream did not stream).
			s.remember(gjson.GetBytes(res.Body, "id").Str, items, gjson.GetBytes(res.Body, "output"))
			return s.send(append(append([]byte(`{"type":"response.completed","response":`), res.Body...), '}'))
		}
		return s.send(errorFromBody(res.Status, res.Body))
	}
	defer res.Stream.Close()
	if !s.track(res.Stream) {
		return false
	}
	defer s.untrack()
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
