package mockupstream

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"
)

// The family names recorded in Recorded.Family; they equal the protocol
// names of ccload's config file.
const (
	Anthropic = "anthropic" // Messages
	OpenAI    = "openai"    // Chat Completions
	Responses = "responses" // OpenAI Responses
	Gemini    = "gemini"    // generateContent
)

// maxBody bounds a request body; Claude Code sends about 64 KiB, images more.
const maxBody = 64 << 20

// Options configure a Server. The zero value answers every request with
// DefaultReply and accepts any non-empty credential.
type Options struct {
	// Script decides the reply to each generation request; nil means
	// DefaultReply. It may be called concurrently, and gets a copy of the
	// record that it may keep but should not change.
	Script func(r *Recorded) Reply
	// Keys, when non-empty, are the only credentials accepted; any other
	// gets the family's 401.
	Keys []string
	// Now gives the timestamps put in responses; nil means time.Now.
	Now func() time.Time
	// MaxRecorded, when > 0, keeps only the last MaxRecorded requests, so a
	// long-running mock (a demo, a benchmark) does not grow without bound.
	MaxRecorded int
	// Families, when non-empty, are the only families served: a path of
	// another family answers 404 as an unknown endpoint would, the way a
	// real single-protocol upstream does (engine protocol detection tests).
	Families []string
	// RefuseWebSocket, when > 0, answers every Responses WebSocket upgrade
	// with that HTTP status instead of upgrading, as an upstream without
	// WebSocket mode does (404, 426…).
	RefuseWebSocket int
	// ForgetResponses makes every Responses WebSocket answer a
	// previous_response_id with previous_response_not_found, as an upstream
	// that lost its socket's memory does.
	ForgetResponses bool
	// Signer, when set, makes the mock sign and verify reasoning as the
	// provider does (signatures.go): the reasoning of every reply is signed
	// with a signature only a mock with the same Signer and family accepts,
	// and a request carrying any other gets the provider's 400 (OpenAI
	// invalid_encrypted_content, Anthropic "Invalid `signature` in
	// `thinking` block", Gemini "Corrupted thought signature."), as does
	// one breaking the provider's rules for reasoning in tool loops.
	Signer string
}

// Recorded is one request the mock received. Its fields are copies owned by
// the record.
type Recorded struct {
	// Family is Anthropic, OpenAI, Responses or Gemini; "" when the path
	// matched no endpoint.
	Family                 string
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
	// Model is the body's "model", or the model in a Gemini path.
	Model string
	// Stream is the body's "stream" flag, or a Gemini streamGenerateContent.
	Stream bool
	// Key is the credential, from the family's header: x-api-key or Bearer
	// (Anthropic), Bearer (OpenAI, Responses), x-goog-api-key or ?key=
	// (Gemini).
	Key string
}

// clone returns a deep copy of r.
func (r Recorded) clone() Recorded {
	r.Header = r.Header.Clone()
	r.Body = slices.Clone(r.Body)
	return r
}

// Server is the mock upstream. It is an http.Handler, so it can be mounted
// in an httptest server or another mux, or serve on its own with Start.
type Server struct {
	opts Options

	mu   sync.Mutex
	reqs []Recorded
	seq  int // per-response id counter, reset with the records

	httpSrv *http.Server
	served  chan error // Serve's result, once Start ran

	conns conns // the open connections and their states (conns.go)

	sockets atomic.Int64 // WebSocket upgrades asked for, refused ones included
	open    atomic.Int64 // WebSockets open now
}

// New returns a Server with the given options. A Server must be made by New.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Server{opts: opts}
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves in the
// background until Close. It returns the base URL, "http://127.0.0.1:PORT".
func (s *Server) Start(addr string) (baseURL string, err error) {
	ln, err := s.listen(addr, nil)
	if err != nil {
		return "", err
	}
	return "http://" + ln.Addr().String(), nil
}

// listen starts serving on addr, over TLS with cfg unless cfg is nil.
func (s *Server) listen(addr string, cfg *tls.Config) (net.Listener, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.httpSrv != nil {
		return nil, errors.New("mockupstream: server already started")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("mockupstream: listen: %w", err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, TLSConfig: cfg, ConnState: s.conns.track}
	s.httpSrv, s.served = srv, make(chan error, 1)
	go func(done chan<- error) {
		if cfg == nil {
			done <- srv.Serve(ln)
			return
		}
		done <- srv.ServeTLS(ln, "", "") // the certificate is in cfg
	}(s.served)
	return ln, nil
}

// Close stops a started server at once, closing open connections and so
// ending streams in progress. It returns nil when Start was never called.
func (s *Server) Close() error {
	s.mu.Lock()
	srv, served := s.httpSrv, s.served
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Close()
	if serr := <-served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	served <- nil // a second Close must not block
	return err
}

// Requests returns a copy of every request received since New or Reset (the
// last Options.MaxRecorded of them when that is set), in arrival order.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Recorded, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = r.clone()
	}
	return out
}

// Reset forgets the recorded requests and restarts the id counter, so that
// the next response ids are the same as a fresh server's.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs, s.seq = nil, 0
}

// serves reports whether family is one of Options.Families (all are
// when that is empty).
func (s *Server) serves(family string) bool {
	return len(s.opts.Families) == 0 || slices.Contains(s.opts.Families, family)
}

// record stores rec and returns the response sequence number for it.
func (s *Server) record(rec Recorded) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, rec.clone())
	if n := s.opts.MaxRecorded; n > 0 && len(s.reqs) > n {
		s.reqs = slices.Delete(s.reqs, 0, len(s.reqs)-n)
	}
	s.seq++
	return s.seq
}

// ServeHTTP records the request, checks its credential and shape as the
// real API would, and answers with the reply the script (or DefaultReply)
// decides.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isSocket(r) {
		s.serveSocket(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if ep := openAIEndpoint(r.URL.Path); ep != "" && s.serves(OpenAI) {
		s.serveOpenAIEndpoint(w, r, ep, body, err)
		return
	}
	rt := matchRoute(r)
	if !s.serves(rt.family) {
		rt = route{}
	}
	rec := Recorded{
		Family: rt.family, Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: body, Model: rt.model, Stream: rt.stream,
	}
	if rt.family != Gemini {
		rec.Model = gjson.GetBytes(body, "model").String()
		rec.Stream = gjson.GetBytes(body, "stream").Bool()
	}
	rec.Key = credential(rt.family, r)
	seq := s.record(rec)

	if err != nil {
		s.fail(w, rt.family, http.StatusRequestEntityTooLarge, "mock upstream: reading body: "+err.Error())
		return
	}
	if rt.family == "" {
		s.unknownEndpoint(w, r)
		return
	}
	if rec.Key == "" {
		s.fail(w, rt.family, http.StatusUnauthorized, "mock upstream: missing credential ("+credentialHint(rt.family)+")")
		return
	}
	if len(s.opts.Keys) > 0 && !slices.Contains(s.opts.Keys, rec.Key) {
		s.fail(w, rt.family, http.StatusUnauthorized, "mock upstream: invalid API key "+fingerprint(rec.Key))
		return
	}
	if r.Method != rt.method {
		s.fail(w, rt.family, http.StatusMethodNotAllowed, "mock upstream: use "+rt.method+" for "+r.URL.Path)
		return
	}
	switch rt.kind {
	case kindModels:
		s.writeJSON(w, modelList(rt.family, s.opts.Now()))
		return
	case kindCount:
		s.writeJSON(w, tokenCount(rt.family, body))
		return
	}
	if msg := checkRequest(rt.family, r, body, rec.Model); msg != "" {
		s.fail(w, rt.family, http.StatusBadRequest, "mock upstream: "+msg)
		return
	}
	if s.opts.Signer != "" {
		if errBody, ok := s.checkSignatures(rt.family, body, rec.Model); !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write(errBody) // an error means the client left
			return
		}
	}
	var rep Reply
	if s.opts.Script != nil {
		cp := rec.clone()
		rep = s.opts.Script(&cp)
	} else {
		rep = DefaultReply(&rec)
	}
	if s.opts.Signer != "" && rep.thinking() {
		rep.ThinkingSignature = mint(rt.family, s.opts.Signer, seq)
	}
	t := &turn{rec: &rec, seq: seq, created: s.opts.Now(),
		includeUsage: gjson.GetBytes(body, "stream_options.include_usage").Bool()}
	respond(w, r, t, rep)
}

func (s *Server) fail(w http.ResponseWriter, family string, status int, msg string) {
	body := errorBody(family, status, msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body) // an error means the client left
}

// unknownEndpoint answers a path no served family has the way OpenAI
// answers "Invalid URL (POST /x)": a 404 whose error names no model and
// has no code, so a client can tell it from a model 404 (ccload's
// protocol detection does).
func (s *Server) unknownEndpoint(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write(jsonOf(struct {
		Error openAIErr `json:"error"`
	}{openAIErr{Message: fmt.Sprintf("mock upstream: no endpoint for %s %s", r.Method, r.URL.Path), Type: "invalid_request_error"}}))
}

func (s *Server) writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body) // an error means the client left
}

// respond writes rep for one generation request: delays, cuts, raw bodies,
// scripted errors, then the family's stream or JSON body.
func respond(w http.ResponseWriter, r *http.Request, t *turn, rep Reply) {
	ctx := r.Context()
	if !wait(ctx, rep.FirstByteDelay) {
		return
	}
	if rep.CutAfterEvents < 0 {
		abort(w, true)
		return
	}
	setFamilyHeaders(w.Header(), t)
	switch {
	case rep.Raw != nil:
		ct := "application/json"
		if t.rec.Stream && rep.Status < 400 && looksLikeSSE(rep.Raw) {
			ct = "text/event-stream"
		}
		writeBody(w, &rep, ct, rep.Raw)
	case rep.RawEvents != nil:
		events := make([][]byte, len(rep.RawEvents))
		for i, e := range rep.RawEvents {
			events[i] = rawEventBlock(e)
		}
		writeStream(ctx, w, &rep, events)
	case rep.Status >= 400:
		writeBody(w, &rep, "application/json", errorBody(t.rec.Family, rep.Status, rep.errorMessage(rep.Status)))
	case t.rec.Stream:
		n := rep.normalized()
		writeStream(ctx, w, &rep, renderStream(t, &n))
	default:
		n := rep.normalized()
		writeBody(w, &rep, "application/json", renderBody(t, &n))
	}
}

// looksLikeSSE reports whether a raw body is an event stream rather than
// JSON, to pick its Content-Type when the script did not.
func looksLikeSSE(b []byte) bool {
	s := strings.TrimLeft(string(b[:min(len(b), 64)]), " \r\n")
	return strings.HasPrefix(s, "data:") || strings.HasPrefix(s, "event:") || strings.HasPrefix(s, ":")
}

// setFamilyHeaders adds the ids real upstreams send with every response.
func setFamilyHeaders(h http.Header, t *turn) {
	switch t.rec.Family {
	case Anthropic:
		h.Set("request-id", t.id("req_mock"))
	case OpenAI, Responses:
		h.Set("x-request-id", t.id("req_mock"))
		h.Set("openai-processing-ms", "1")
	}
}

func renderStream(t *turn, rep *Reply) [][]byte {
	switch t.rec.Family {
	case Anthropic:
		return anthropicEvents(t, rep)
	case OpenAI:
		return chatEvents(t, rep)
	case Responses:
		return responsesEvents(t, rep)
	}
	return geminiEvents(t, rep)
}

func renderBody(t *turn, rep *Reply) []byte {
	switch t.rec.Family {
	case Anthropic:
		return anthropicBody(t, rep)
	case OpenAI:
		return chatBody(t, rep)
	case Responses:
		return responsesBody(t, rep)
	}
	return geminiBody(t, rep)
}

// turn is one generation request as the renderers see it.
type turn struct {
	rec          *Recorded
	seq          int
	created      time.Time
	includeUsage bool // Chat stream_options.include_usage
}

// id returns a response id with prefix, unique per request and
// deterministic: the n-th request a server records (since New or Reset)
// gets number n.
func (t *turn) id(prefix string) string { return fmt.Sprintf("%s%06d", prefix, t.seq) }

// callID returns the id of the i-th tool call.
func (t *turn) callID(prefix string, c ToolCall, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("%s%06d_%d", prefix, t.seq, i)
}

// fingerprint shows a credential the way ccload does: never in full.
func fingerprint(key string) string {
	if len(key) <= 8 {
		return "****"
	}
	return key[:4] + "…" + key[len(key)-4:]
}
