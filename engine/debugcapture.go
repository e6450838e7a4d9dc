package engine

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/engine/upstream"
)

// Debug capture. A request whose token or channel says
// `debug: true` keeps, for every upstream attempt that reached the point of
// sending, what was sent (method, URL, headers, body) and what came back
// (status, headers, body), each body cut at server.debug_max_bytes. The
// capture travels with the log row through the batched writer (no database
// call on the request path) into request_debug.
//
// Nothing in a capture holds a secret in clear: the URL goes through
// config.MaskURL (userinfo, ?key=), the value of every credential header
// (by the forwarding rule's names and words, send.go) becomes a
// fingerprint, and headers and bodies go through the snapshot's Redactor,
// which knows every channel key and URL credential, plus the client's own
// token (never forwarded, but a client may paste it into a body).
//
// Response bodies are copied as the attempt reads them, through a reader
// that stops copying once the buffer is full: a stream is relayed at the
// same pace, and the capture is complete when the row is written (finish
// runs after the body is read or abandoned).

// debugCapture is the capture of one request: one exchange per captured
// attempt. Its JSON is what GET /admin/logs/{id} returns under "debug"
// (adminapi.Debug).
type debugCapture struct {
	MaxBytes  int              `json:"max_bytes"`
	Exchanges []*debugExchange `json:"exchanges"`
}

// debugExchange is one attempt's request and response. Attempt is the
// 1-based index into the row's attempt_log.
type debugExchange struct {
	Attempt  int            `json:"attempt"`
	Request  debugRequest   `json:"request"`
	Response *debugResponse `json:"response,omitempty"`
	// red and secrets scrub the response when the capture is encoded.
	red     *failure.Redactor
	secrets []string
}

type debugRequest struct {
	Method string        `json:"method"`
	URL    string        `json:"url"`
	Header []debugHeader `json:"header"`
	debugBody
}

type debugResponse struct {
	Status int           `json:"status"`
	Header []debugHeader `json:"header"`
	debugBody
	mu   sync.Mutex
	body *cappedBuffer
}

type debugHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// debugBody is a body as stored: text, or base64 when it is not UTF-8
// (audio, images); Size is every byte seen, Truncated says Body is cut.
type debugBody struct {
	Body      string `json:"body"`
	Base64    bool   `json:"base64,omitempty"`
	Size      int64  `json:"size"`
	Truncated bool   `json:"truncated,omitempty"`
}

// debugOn reports whether the request's traffic on ch is captured. It is
// asked only of a request that may be captured (request.debug: its token
// or some channel has debug on).
func (r *request) debugOn(ch *config.Channel) bool {
	return ch.Debug || r.token != nil && r.token.Debug
}

// captureRequest starts the exchange of an attempt about to be sent and
// returns it; the response is added by captureResponse.
func (r *request) captureRequest(attempt int, rq *upstreamRequest) *debugExchange {
	max := r.debugMax()
	var h headerList
	rq.Header(&h)
	x := &debugExchange{Attempt: attempt, red: r.rec.red, secrets: r.clientSecrets()}
	x.Request = debugRequest{
		Method: http.MethodPost,
		URL:    config.MaskURL(rq.URL),
		Header: x.maskHeaders(h),
	}
	x.Request.debugBody = x.body(rq.Body, int64(len(rq.Body)), max)
	r.rec.addExchange(x, max)
	return x
}

// debugMax is server.debug_max_bytes of the request's snapshot.
func (r *request) debugMax() int {
	if max := int(r.snap.Server.DebugMaxBytes); max > 0 {
		return max
	}
	return int(config.DefaultServer.DebugMaxBytes)
}

// captureResponse records resp's status and headers and makes its body
// copy into the capture as it is read.
func (x *debugExchange) captureResponse(resp *upstreamResponse, max int) {
	dr := &debugResponse{Status: resp.StatusCode, body: &cappedBuffer{max: max}}
	dr.Header = x.maskHeaders(responseHeaders(resp.Header))
	resp.Body = &teeBody{ReadCloser: resp.Body, resp: dr}
	x.Response = dr
}

// clientSecrets are the client credentials the request arrived with, to be
// scrubbed from the capture: ccload never forwards them, but a body is the
// client's own bytes.
func (r *request) clientSecrets() []string {
	if r.clientKey == "" {
		return nil
	}
	return []string{r.clientKey}
}

// maskHeaders fingerprints credential values and scrubs the rest.
func (x *debugExchange) maskHeaders(h headerList) []debugHeader {
	out := make([]debugHeader, 0, len(h))
	for _, kv := range h {
		v := kv[1]
		if credentialHeader(kv[0]) {
			v = maskCredential(v)
		} else {
			v = x.scrub(v)
		}
		out = append(out, debugHeader{Name: kv[0], Value: v})
	}
	return out
}

// credentialHeader reports whether a header's value is a credential: the
// names the forwarding rule drops as credentials, and any name holding one
// of its credential words (send.go), plus the response's Set-Cookie.
func credentialHeader(name string) bool {
	lower := strings.ToLower(name)
	switch lower {
	case "authorization", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie", "set-cookie":
		return true
	}
	return namesCredential([]byte(lower))
}

// maskCredential keeps an auth scheme ("Bearer ") and fingerprints the rest
// ("Bearer sk-a…f3c9"), as keys are shown everywhere else.
func maskCredential(v string) string {
	if scheme, rest, ok := strings.Cut(v, " "); ok && !strings.ContainsAny(scheme, "=;") {
		return scheme + " " + config.Fingerprint(strings.TrimSpace(rest))
	}
	return config.Fingerprint(v)
}

// scrub removes every secret the Redactor knows and the client's own
// credentials from s.
func (x *debugExchange) scrub(s string) string {
	for _, sec := range x.secrets {
		if len(sec) >= 8 {
			s = strings.ReplaceAll(s, sec, config.Fingerprint(sec))
		}
	}
	return string(x.red.Body([]byte(s)))
}

// body stores b (of total size n) cut at max bytes, scrubbed.
func (x *debugExchange) body(b []byte, n int64, max int) debugBody {
	cut := len(b) > max
	if cut {
		b = b[:max]
	}
	d := debugBody{Size: n, Truncated: cut || n > int64(len(b))}
	text := b
	if d.Truncated {
		text = trimPartialRune(b)
	}
	if utf8.Valid(text) {
		d.Body = x.scrub(string(text))
		return d
	}
	d.Base64 = true
	d.Body = base64.StdEncoding.EncodeToString(b)
	return d
}

// trimPartialRune drops an incomplete UTF-8 sequence the cut left at the
// end, so a cut text body still reads as text.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// encode returns the capture's JSON, with each response body taken from
// what its reader copied so far. Called with rec.mu held, once the
// request is over.
func (c *debugCapture) encode() string {
	for _, x := range c.Exchanges {
		if dr := x.Response; dr != nil {
			dr.mu.Lock()
			dr.debugBody = x.body(dr.body.buf, dr.body.seen, dr.body.max)
			dr.mu.Unlock()
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return ""
	}
	return string(b)
}

// cappedBuffer keeps the first max bytes written to it and counts all.
type cappedBuffer struct {
	buf  []byte
	max  int
	seen int64
}

func (c *cappedBuffer) write(p []byte) {
	c.seen += int64(len(p))
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
}

// teeBody copies what is read of a response body into its capture.
type teeBody struct {
	io.ReadCloser
	resp *debugResponse
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if n > 0 {
		t.resp.mu.Lock()
		t.resp.body.write(p[:n])
		t.resp.mu.Unlock()
	}
	return n, err
}

// headerList records headers in order, as headerSetter calls them.
type headerList [][2]string

func (h *headerList) Add(k, v string) { *h = append(*h, [2]string{k, v}) }

func (h *headerList) Set(k, v string) {
	h.Del(k)
	h.Add(k, v)
}

func (h *headerList) Del(k string) {
	*h = slices.DeleteFunc(*h, func(kv [2]string) bool { return strings.EqualFold(kv[0], k) })
}

// responseHeaders lists a response's headers from either upstream client.
func responseHeaders(h interface{ Get(string) string }) headerList {
	var out headerList
	switch h := h.(type) {
	case http.Header:
		keys := make([]string, 0, len(h))
		for k := range h {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			for _, v := range h[k] {
				out.Add(k, v)
			}
		}
	case *upstream.Header:
		for _, kv := range h.Fields() {
			out.Add(kv[0], kv[1])
		}
	}
	return out
}
