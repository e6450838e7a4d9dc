package upstream

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
)

// TestDifferentialOverTCP: the same answers served by a raw TCP server to
// the whole HTTP/1.1 client (Clients.Do: dial, write, read, pool) and to
// net/http's client read alike: status, headers, body and whether they
// fail, by sameAnswer's rules (the fuzz targets compare the readers on
// any bytes; this is the clients end to end on the cases that matter).
func TestDifferentialOverTCP(t *testing.T) {
	for _, tc := range []struct{ name, answer string }{
		{"length", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nRequest-Id: r1\r\nContent-Length: 5\r\n\r\nhello"},
		{"error status with a body", "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 2\r\n\r\n{}"},
		{"chunked, extensions, trailers", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n"},
		{"interim answers", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"},
		{"until close", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\ndata: 2\n\n"},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"},
		{"no content", "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"},
		{"folded header", "HTTP/1.1 200 OK\r\nX-Folded: a\r\n\tb\r\nContent-Length: 0\r\n\r\n"},
		{"length and chunked", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"},
		{"repeated equal lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok"},
		{"differing lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok"},
		{"signed length", "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok"},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok"},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n"},
		{"chunk cut short", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"},
		{"not HTTP", "SSH-2.0-OpenSSH_9.6\r\n\r\n"},
		{"control byte in a value", "HTTP/1.1 200 OK\r\nX: a\x01b\r\nContent-Length: 0\r\n\r\n"},
		{"deliberate: other transfer coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nraw"},
		{"deliberate: space before a colon", "HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := serveOnce(t, tc.answer)
			o := doOurs(url)
			g := doTheirs(url)
			if msg := sameAnswer([]byte(tc.answer), o, g); msg != "" {
				t.Fatalf("%s\nours:     status %d, body %q, err %v\nnet/http: status %d, body %q, err %v",
					msg, o.status, o.body, o.err, g.status, g.body, g.err)
			}
		})
	}
}

// serveOnce serves answer to every request, each on its connection,
// which it then closes.
func serveOnce(t *testing.T, answer string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				io.WriteString(c, answer)
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/v1"
}

func doOurs(url string) answer {
	rq := &Request{Ctx: context.Background(), URL: url, Body: []byte("{}"), Header: func(HeaderSetter) {}}
	resp, err := New(nil, nil).Do(rq)
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

func doTheirs(url string) answer {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}}
	resp, err := c.Post(url, "application/json", bytes.NewReader([]byte("{}")))
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}
