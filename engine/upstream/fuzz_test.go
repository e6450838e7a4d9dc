package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
	"time"
)

// The parsers of upstream bytes, fuzzed. Every target feeds a byte stream
// to the HTTP/1.1 client's answer reader (roundTrip, then the body read to
// its end), in reads of a size the fuzzer picks too, and the same stream
// to net/http's reader, and compares them (differential). Each target
// shapes the stream to reach one parser: the status line and headers,
// interim answers, a Content-Length body, a chunked body (size lines and
// extensions), trailers, a body that ends with the connection.

// streamConn is an upstream connection that answers with a byte stream,
// piece bytes per read, and then EOF; what is written to it is dropped.
type streamConn struct {
	data  []byte
	piece int
}

func (c *streamConn) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.piece)], c.data)
	c.data = c.data[n:]
	return n, nil
}

func (c *streamConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *streamConn) Close() error                     { return nil }
func (c *streamConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *streamConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *streamConn) SetDeadline(time.Time) error      { return nil }
func (c *streamConn) SetReadDeadline(time.Time) error  { return nil }
func (c *streamConn) SetWriteDeadline(time.Time) error { return nil }

// fuzzClient pools what the answers leave pooled: at most h1MaxIdlePerAddr
// connections, and one reap timer for the run.
var fuzzClient = newH1Client()

// answer is what a reader made of a stream.
type answer struct {
	status int
	header interface{ Get(string) string }
	names  []string // the header names read, in order
	body   []byte
	err    error
	inHead bool // err came before the answer's head was read
}

// ours reads stream with the HTTP/1.1 client, piece bytes per read.
func ours(stream []byte, piece int) answer {
	c := &h1Conn{nc: &streamConn{data: stream, piece: piece}, addr: "fuzz"}
	req := h1Reqs.Get().(*h1Req)
	defer req.release()
	req.encode(h1Target{addr: "fuzz", host: "fuzz", uri: "/"}, []byte("{}"))
	rq := &Request{Ctx: context.Background(), Header: func(HeaderSetter) {}}
	resp, err := c.roundTrip(fuzzClient, rq, req)
	if err != nil {
		return answer{err: err, inHead: true}
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	for _, kv := range resp.Header.(*Header).Fields() {
		a.names = append(a.names, kv[0])
	}
	a.body, a.err = io.ReadAll(resp.Body)
	return a
}

// theirs reads stream as net/http's Transport does: http.ReadResponse,
// skipping interim (1xx) answers other than 101.
func theirs(stream []byte) answer {
	br := bufio.NewReader(bytes.NewReader(stream))
	req, _ := http.NewRequest(http.MethodPost, "http://fuzz/", nil)
	interim := 0
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return answer{err: err}
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != 101 {
			resp.Body.Close()
			if interim++; interim > 64 {
				return answer{err: errors.New("too many interim answers")}
			}
			continue
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return answer{status: resp.StatusCode, header: resp.Header, body: b, err: err}
	}
}

// differential reads stream both ways and fails t where they disagree in
// a way that matters (deliberate differences: sameAnswer).
func differential(t *testing.T, stream []byte, piece int) {
	if piece <= 0 {
		piece = 1
	}
	o, g := ours(stream, piece), theirs(stream)
	if msg := sameAnswer(stream, o, g); msg != "" {
		t.Fatalf("%s\nstream %q (reads of %d)\nours:     status %d, body %q, err %v\nnet/http: status %d, body %q, err %v",
			msg, stream, piece, o.status, o.body, o.err, g.status, g.body, g.err)
	}
}

// sameAnswer is "" when the two readings agree, else what differs. Both
// must read the same status, headers and body, and fail or succeed
// together, except where this client is deliberately different:
//
//   - It is stricter (fails where net/http reads an answer) on: a bare
//     CR or LF in the head or a chunk line (RFC 9112 §2.2 allows refusing
//     them; no provider sends them), a field name that is not a token,
//     such as one with whitespace before its colon (RFC 9112 §5.1), a
//     status line other than "HTTP/1.d ddd[ reason]" or
//     with a code below 100, a header block over 64 KiB,
//     a Content-Length that is not valid though Transfer-Encoding
//     overrides it, and a 101 answer (no request of ours asks to switch
//     protocols). Failing an attempt is safe: it is retried elsewhere.
//   - It reads the body to the end of the connection when
//     Transfer-Encoding is present without chunked last, as RFC 9112
//     §6.3 says for a response; net/http refuses such an answer. It
//     takes whitespace before a chunk extension's ';' (RFC 9112 §7.1.1),
//     which net/http refuses. Trailer fields are skipped unread, so a
//     malformed one that net/http refuses does not fail the answer.
//
// A body that both read but differently, or one read where net/http saw
// a malformed answer for another reason, is a bug.
func sameAnswer(stream []byte, o, g answer) string {
	switch {
	case o.err == nil && g.err == nil:
		if o.status != g.status {
			return "different status"
		}
		if !bytes.Equal(o.body, g.body) {
			return "different body"
		}
		for _, name := range o.names {
			switch http.CanonicalHeaderKey(name) {
			case "Transfer-Encoding", "Content-Length", "Trailer", "Connection":
				continue // framing: net/http moves them out of Header
			}
			if o.header.Get(name) != g.header.Get(name) {
				return "different value of " + name
			}
		}
		return ""
	case o.err != nil && g.err != nil:
		return ""
	case o.err != nil:
		if stricter(stream, o) {
			return ""
		}
		return "only ours failed"
	default:
		if lenient(o, g) {
			return ""
		}
		return "only net/http failed"
	}
}

// stricter reports whether ours failed on stream for a reason it is
// deliberately stricter than net/http about (sameAnswer).
func stricter(stream []byte, o answer) bool {
	err := o.err
	head, _, _ := bytes.Cut(stream, []byte("\r\n\r\n"))
	msg := err.Error()
	for _, m := range []string{"bare CR or LF", "malformed status", "larger than 64 KiB", "101 Switching", errMalformedHeader.Error()} {
		if strings.Contains(msg, m) {
			return true
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) && o.inHead && bareLineEnd(stream) {
		return true // a head ends with a bare LF, which ours never sees as its end
	}
	return strings.Contains(msg, "bad Content-Length") && bytes.Contains(bytes.ToLower(head), []byte("transfer-encoding"))
}

// lenient reports whether ours read an answer net/http refused for a
// reason ours is deliberately lenient about (sameAnswer): a
// Transfer-Encoding other than one "chunked" (one whose last coding is
// not chunked, or several fields), whitespace before a chunk extension,
// or trailer fields net/http finds malformed after a body both read.
func lenient(o answer, g answer) bool {
	h := o.header.(*Header)
	te := 0
	for _, kv := range h.Fields() {
		if strings.EqualFold(kv[0], "Transfer-Encoding") {
			te++
		}
	}
	if te > 1 || te == 1 && !strings.EqualFold(h.Get("Transfer-Encoding"), "chunked") {
		return true
	}
	if h.chunked && g.status != 0 && g.err != nil && g.err.Error() == "invalid byte in chunk length" {
		return true // whitespace before a chunk extension's ';' (RFC 9112 §7.1.1 allows it)
	}
	var pe textproto.ProtocolError
	return h.chunked && g.status != 0 && errors.As(g.err, &pe)
}

func addSeeds(f *testing.F, seeds ...string) {
	for i, s := range seeds {
		f.Add([]byte(s), uint8(1+i%7))
		f.Add([]byte(s), uint8(255))
	}
}

const okHead = "HTTP/1.1 200 OK\r\n"

// FuzzHead: the status line and header fields.
func FuzzHead(f *testing.F) {
	addSeeds(f,
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.0 429 Too Many Requests\r\nRetry-After: 7\r\nConnection: keep-alive\r\n\r\n",
		"HTTP/1.1 503 \r\nX-Folded: a\r\n\tb \r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nA:1\r\nB:  2  \r\nrequest-id: r\r\nRequest-Id: s\r\nContent-Length: 1\r\n\r\nx",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok",
	)
	f.Fuzz(func(t *testing.T, stream []byte, piece uint8) {
		differential(t, stream, int(piece))
		if h, status, err := ParseHead(stream); err == nil && (status < 100 || status > 999 || h == nil) {
			t.Fatalf("ParseHead(%q) = status %d without an error", stream, status)
		}
	})
}

// FuzzInterim: 1xx answers before the final one.
func FuzzInterim(f *testing.F) {
	addSeeds(f,
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 102 Processing\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\n\r\nend",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
	)
	f.Fuzz(func(t *testing.T, stream []byte, piece uint8) { differential(t, stream, int(piece)) })
}

// FuzzLengthBody: a body of Content-Length bytes, and what follows it.
func FuzzLengthBody(f *testing.F) {
	addSeeds(f,
		"Content-Length: 5\r\n\r\nhello",
		"Content-Length: 10\r\n\r\nshort",
		"Content-Length: 2\r\nContent-Length: 2\r\n\r\nokextra",
		"Content-Length: 2\r\nContent-Length: 3\r\n\r\nok",
		"Content-Length: +2\r\n\r\nok",
		"Content-Length: 0\r\n\r\n",
	)
	f.Fuzz(func(t *testing.T, rest []byte, piece uint8) {
		differential(t, append([]byte(okHead), rest...), int(piece))
	})
}

// FuzzChunkedBody: chunk-size lines, extensions, chunk data and its CRLF.
func FuzzChunkedBody(f *testing.F) {
	addSeeds(f,
		"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n",
		"A\r\n0123456789\r\n0\r\n\r\n",
		"5 ;a=b\r\nhello\r\n0;x\r\n\r\n",
		"zz\r\nok\r\n0\r\n\r\n",
		"2\r\nokXX1\r\na\r\n0\r\n\r\n",
		"ffffffffffffffffff\r\n",
		"2\r\nok\r\n",
	)
	f.Fuzz(func(t *testing.T, body []byte, piece uint8) {
		differential(t, append([]byte(okHead+"Transfer-Encoding: chunked\r\n\r\n"), body...), int(piece))
	})
}

// FuzzTrailers: the fields after the last chunk.
func FuzzTrailers(f *testing.F) {
	addSeeds(f,
		"X-Trailer: t\r\n\r\n",
		"\r\n",
		"A: 1\r\nB: 2\r\n\r\nHTTP/1.1 200 OK\r\n",
		"no colon\r\n\r\n",
	)
	f.Fuzz(func(t *testing.T, trailers []byte, piece uint8) {
		differential(t, append([]byte(okHead+"Transfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n"), trailers...), int(piece))
	})
}

// FuzzCloseBody: a body that ends with the connection (no length, no
// chunking), after headers the fuzzer picks.
func FuzzCloseBody(f *testing.F) {
	addSeeds(f,
		"\r\nto the end",
		"Connection: close\r\n\r\nbye",
		"Transfer-Encoding: gzip\r\n\r\nraw",
		"Transfer-Encoding: chunked, identity\r\n\r\n2\r\nok\r\n0\r\n\r\n",
	)
	f.Fuzz(func(t *testing.T, rest []byte, piece uint8) {
		differential(t, append([]byte(okHead), rest...), int(piece))
	})
}

// FuzzChunkSize: a chunk-size line alone.
func FuzzChunkSize(f *testing.F) {
	for _, s := range []string{"0", "a", "FF;ext", "1 ; x=y", "", ";", "10000000000000000", "g"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		size, ok := chunkSize(line)
		if ok && (size < 0 || len(line) == 0) {
			t.Fatalf("chunkSize(%q) = %d, true", line, size)
		}
	})
}
