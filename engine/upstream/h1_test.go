package upstream

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// h1Server is a raw HTTP/1.1 upstream: for each request it reads, answer
// writes the reply, in pieces with pauses between them so that the client
// reads each piece separately. It counts the connections it accepted.
type h1Server struct {
	url   string
	conns atomic.Int32
	seen  chan *fasthttp.Request
}

func startH1Server(t *testing.T, answer func(n int) (pieces []string, keep bool)) *h1Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &h1Server{url: "http://" + ln.Addr().String(), seen: make(chan *fasthttp.Request, 64)}
	var served atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req := new(fasthttp.Request)
					if err := req.Read(br); err != nil {
						return
					}
					s.seen <- req
					pieces, keep := answer(int(served.Add(1)))
					for _, p := range pieces {
						if _, err := io.WriteString(c, p); err != nil {
							return
						}
						time.Sleep(2 * time.Millisecond)
					}
					if !keep {
						return
					}
				}
			}()
		}
	}()
	return s
}

func h1Get(t *testing.T, u *h1Client, url string, header func(h HeaderSetter)) (*Response, []byte, error) {
	t.Helper()
	target, ok := parseH1Target(url)
	if !ok {
		t.Fatalf("parseH1Target(%q) refused", url)
	}
	if header == nil {
		header = func(h HeaderSetter) { h.Set("Content-Type", "application/json") }
	}
	rq := &Request{Ctx: context.Background(), URL: url, Body: []byte(`{"q":1}`), Header: header}
	resp, err := u.do(rq, target)
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b, err
}

// TestH1ClientReadsEveryFraming: lengths, chunks (with extensions and
// trailers, split anywhere), interim answers, bodies to the end of the
// connection; and a connection goes back to the pool only when its answer
// was read to the end and the upstream keeps it.
func TestH1ClientReadsEveryFraming(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pieces []string
		keep   bool
		body   string
		pooled bool
	}{
		{"length, one piece", []string{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nRequest-Id: r1\r\n\r\nhello"}, true, "hello", true},
		{"many headers, folded", []string{"HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\nF: 6\r\nG: 7\r\nH: 8\r\nX-Folded: a\r\n\tb \r\ncontent-length:\t2\r\n\r\nok"}, true, "ok", true},
		{"length, split", []string{"HTTP/1.1 200 OK\r\nConte", "nt-Length: 11\r\n\r", "\nhello", " world"}, true, "hello world", true},
		{"chunked", []string{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", "6;ext=1\r\n wor", "ld\r", "\n0\r\nX-Trailer: t\r\n\r\n"}, true, "hello world", true},
		{"chunked, byte by byte", strings.Split("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n", ""), true, "0123456789", true},
		{"interim answers", []string{"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"}, true, "ok", true},
		{"connection close", []string{"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"}, false, "ok", false},
		{"until close", []string{"HTTP/1.1 200 OK\r\n\r\nto the ", "end"}, false, "to the end", false},
		{"HTTP/1.0", []string{"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"}, false, "ok", false},
		{"no content", []string{"HTTP/1.1 204 No Content\r\n\r\n"}, true, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startH1Server(t, func(int) ([]string, bool) { return tc.pieces, tc.keep })
			u := newH1Client()
			for i := range 2 {
				resp, body, err := h1Get(t, u, s.url+"/v1/x?y=1", nil)
				if err != nil || string(body) != tc.body {
					t.Fatalf("request %d: body %q, err %v; want %q", i, body, err, tc.body)
				}
				if resp.StatusCode/100 != 2 {
					t.Fatalf("request %d: status %d", i, resp.StatusCode)
				}
				req := <-s.seen
				if string(req.URI().RequestURI()) != "/v1/x?y=1" || string(req.Body()) != `{"q":1}` {
					t.Fatalf("upstream saw %q with body %q", req.URI().RequestURI(), req.Body())
				}
			}
			want := int32(2)
			if tc.pooled {
				want = 1
			}
			if got := s.conns.Load(); got != want {
				t.Errorf("two requests took %d connections, want %d", got, want)
			}
		})
	}
}

// TestH1ClientRefusesMalformedAnswers: an answer this client cannot frame
// fails the attempt instead of being half read.
func TestH1ClientRefusesMalformedAnswers(t *testing.T) {
	for _, tc := range []struct{ name, answer string }{
		{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n"},
		{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n"},
		{"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok"},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n"},
		{"chunk without its end", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX1\r\na\r\n0\r\n\r\n"},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok"},
		{"space before a colon", "HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok"},
		{"no colon", "HTTP/1.1 200 OK\r\nContent-Length\r\n\r\nok"},
		{"fold first", "HTTP/1.1 200 OK\r\n folded\r\nContent-Length: 2\r\n\r\nok"},
		{"headers too large", "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 70<<10) + "\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startH1Server(t, func(int) ([]string, bool) { return []string{tc.answer}, false })
			if _, body, err := h1Get(t, newH1Client(), s.url+"/", nil); err == nil {
				t.Fatalf("read %q without an error", body)
			}
		})
	}
}

// TestH1ClientWritesOnlyItsOwnFraming: the request carries the headers
// set, its own Host and Content-Length, and nothing a header value could
// smuggle in.
func TestH1ClientWritesOnlyItsOwnFraming(t *testing.T) {
	s := startH1Server(t, func(int) ([]string, bool) {
		return []string{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"}, true
	})
	_, _, err := h1Get(t, newH1Client(), s.url+"/p", func(h HeaderSetter) {
		h.Add("X-A", "1")
		h.Add("x-a", "2")
		h.Set("X-B", "evil\r\nX-Injected: yes")
		h.Set("Content-Length", "999")
		h.Set("Transfer-Encoding", "chunked")
		h.Set("Bad Name", "x")
		h.Add("X-Gone", "x")
		h.Del("x-gone")
	})
	if err != nil {
		t.Fatal(err)
	}
	req := <-s.seen
	if got := string(req.Header.Peek("X-Injected")); got != "" {
		t.Errorf("a header value split the request: X-Injected %q", got)
	}
	if got := string(req.Header.Peek("X-B")); got != "evil  X-Injected: yes" {
		t.Errorf("X-B = %q", got)
	}
	if n := len(req.Header.PeekAll("X-A")); n != 2 {
		t.Errorf("X-A sent %d times, want 2", n)
	}
	if req.Header.ContentLength() != len(`{"q":1}`) || string(req.Body()) != `{"q":1}` || len(req.Header.Peek("X-Gone")) != 0 {
		t.Errorf("upstream saw Content-Length %d, body %q, X-Gone %q", req.Header.ContentLength(), req.Body(), req.Header.Peek("X-Gone"))
	}
	if want := strings.TrimPrefix(s.url, "http://"); string(req.Host()) != want {
		t.Errorf("Host %q, want %q", req.Host(), want)
	}
}

// TestH1ClientSendsAgainOnAStaleConnection: an idle connection the
// upstream closed fails the next request before any byte of an answer;
// it is sent again once on a new connection. A failure after an answer
// began is not.
func TestH1ClientSendsAgainOnAStaleConnection(t *testing.T) {
	s := startH1Server(t, func(n int) ([]string, bool) {
		if n == 3 {
			return []string{"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\npart"}, false
		}
		return []string{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"}, false // closes after each
	})
	u := newH1Client()
	for i := range 2 {
		if _, body, err := h1Get(t, u, s.url+"/", nil); err != nil || string(body) != "ok" {
			t.Fatalf("request %d: %q %v", i, body, err)
		}
	}
	if _, _, err := h1Get(t, u, s.url+"/", nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("an answer cut short: %v, want an unexpected EOF", err)
	}
}

// TestH1ClientStopsAWaitingReadWhenTheAttemptEnds: a stream that stalls
// is ended by the attempt's context, with its cause.
func TestH1ClientStopsAWaitingReadWhenTheAttemptEnds(t *testing.T) {
	s := startH1Server(t, func(int) ([]string, bool) {
		return []string{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n", "", ""}, true
	})
	ctx, cancel := context.WithCancelCause(context.Background())
	url := s.url + "/"
	target, _ := parseH1Target(url)
	rq := &Request{Ctx: ctx, URL: url, Body: []byte("{}"), Header: func(HeaderSetter) {}, HeaderBy: time.Now().Add(time.Minute)}
	resp, err := newH1Client().do(rq, target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 16)
	if n, err := resp.Body.Read(buf); err != nil || string(buf[:n]) != "hi" {
		t.Fatalf("first read %q %v", buf[:n], err)
	}
	stop := errors.New("stop")
	time.AfterFunc(20*time.Millisecond, func() { cancel(stop) })
	if _, err := resp.Body.Read(buf); !errors.Is(err, stop) {
		t.Fatalf("read after the attempt ended: %v, want its cause", err)
	}
}

func TestParseH1Target(t *testing.T) {
	for raw, want := range map[string]h1Target{
		"http://h":                {"h:80", "h", "/"},
		"http://h:8080/a/b?c=d#e": {"h:8080", "h:8080", "/a/b?c=d"},
		"http://h?x=1":            {"h:80", "h", "/?x=1"},
		"http://[::1]/v1":         {"[::1]:80", "[::1]", "/v1"},
		"http://[::1]:9/v1":       {"[::1]:9", "[::1]:9", "/v1"},
		"http://h/m:generate?k=v": {"h:80", "h", "/m:generate?k=v"},
		"http://127.0.0.1:1/x y":  {},
		"http://user:pw@h/":       {},
		"https://h/":              {},
		"http:///nohost":          {},
		"http://h/a\r\nX-Evil: 1": {},
	} {
		got, ok := parseH1Target(raw)
		if ok != (want != h1Target{}) || got != want {
			t.Errorf("parseH1Target(%q) = %+v, %v; want %+v", raw, got, ok, want)
		}
	}
}

func TestParseHeadLooksUpAsHTTPHeaderDoes(t *testing.T) {
	h, status, err := ParseHead([]byte("HTTP/1.1 429 Too Many Requests\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\nF: 6\r\nG: 7\r\nH: 8\r\n" +
		"X-Folded: a\r\n\tb \r\nretry-after:\t 7 \r\nRetry-After: 9\r\n\r\n"))
	if err != nil || status != 429 {
		t.Fatalf("ParseHead: %d %v", status, err)
	}
	for name, want := range map[string]string{"h": "8", "X-FOLDED": "a b", "Retry-After": "7", "Missing": ""} {
		if got := h.Get(name); got != want {
			t.Errorf("Get(%q) = %q, want %q", name, got, want)
		}
	}
	if len(h.kv) != 11 {
		t.Errorf("%d headers, want 11", len(h.kv))
	}
}

// TestH1ClientRetriesAReusedConnectionClosedUnderTheRequest: the race the
// idle check cannot see, an upstream that closes a pooled connection just
// as a request is sent on it (it read the request, or not, and answered
// nothing). The request goes again once on a new connection, as net/http
// does for a connection the server closed while idle; on a new connection
// the same failure is the attempt's. Both a close (EOF) and a reset.
func TestH1ClientRetriesAReusedConnectionClosedUnderTheRequest(t *testing.T) {
	for _, reset := range []bool{false, true} {
		name := "close"
		if reset {
			name = "reset"
		}
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			var conns atomic.Int32
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					n := conns.Add(1)
					go func() {
						defer c.Close()
						br := bufio.NewReader(c)
						for served := 0; ; served++ {
							if err := new(fasthttp.Request).Read(br); err != nil {
								return
							}
							// The first connection answers once, then drops the next
							// request unanswered; the third drops its first.
							if n == 1 && served == 1 || n == 3 {
								if reset {
									c.(*net.TCPConn).SetLinger(0)
								}
								return
							}
							io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
						}
					}()
				}
			}()
			url := "http://" + ln.Addr().String() + "/"
			u := newH1Client()
			for i := range 2 {
				if _, body, err := h1Get(t, u, url, nil); err != nil || string(body) != "ok" {
					t.Fatalf("request %d: %q, %v; want ok (sent again on a new connection)", i, body, err)
				}
			}
			if got := conns.Load(); got != 2 {
				t.Fatalf("%d connections, want 2: the dropped request went again on a second one", got)
			}
			// The pooled second connection answers; take it out of the way so
			// that the next request dials the third, which drops it.
			for c := u.take(strings.TrimPrefix(strings.TrimSuffix(url, "/"), "http://")); c != nil; c = u.take(c.addr) {
				c.close()
			}
			if _, _, err := h1Get(t, u, url, nil); err == nil {
				t.Fatal("a new connection closed without an answer: no error; want the attempt's failure")
			}
			if got := conns.Load(); got != 3 {
				t.Fatalf("%d connections, want 3: a failure on a new connection is not sent again", got)
			}
		})
	}
}
