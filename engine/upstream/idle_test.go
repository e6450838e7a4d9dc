package upstream

import (
	"bufio"
	"io"
	"net"
	"testing"

	"github.com/valyala/fasthttp"
)

// An idle pooled connection that receives bytes is discarded, never used
// for the next request: what arrived belongs to no request of ours.

// idleBytesCase answers the first request with 200 and then, while the
// connection idles, writes idle (and closes when keep is false); the
// second request must get the second connection's 200.
func idleBytesCase(t *testing.T, idle string, keep bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	pooled, wrote := make(chan struct{}), make(chan struct{})
	go func() {
		for first := true; ; first = false {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(first bool) {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					if err := new(fasthttp.Request).Read(br); err != nil {
						return
					}
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
					if first {
						first = false
						<-pooled                // the client has read the answer and pooled the connection
						io.WriteString(c, idle) // on loopback, in the client's socket once written
						close(wrote)
						if !keep {
							return
						}
					}
				}
			}(first)
		}
	}()
	s := &h1Server{url: "http://" + ln.Addr().String()}
	u := newH1Client()
	if _, body, err := h1Get(t, u, s.url+"/", nil); err != nil || string(body) != "ok" {
		t.Fatalf("first request: %q %v", body, err)
	}
	close(pooled)
	<-wrote
	resp, body, err := h1Get(t, u, s.url+"/", nil)
	if err != nil || resp.StatusCode != 200 || string(body) != "ok" {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("request after %q arrived on the idle connection: status %d, %q, %v; want 200 from a new connection", idle, status, body, err)
	}
}

// TestH1ClientDiscardsIdleConnAfter408: Google's front ends answer an idle
// keep-alive connection with 408 before closing it.
func TestH1ClientDiscardsIdleConnAfter408(t *testing.T) {
	idleBytesCase(t, "HTTP/1.1 408 Request Time-out\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", false)
}

// TestH1ClientDiscardsIdleConnAfterStrayCRLF: a CRLF after an answer.
func TestH1ClientDiscardsIdleConnAfterStrayCRLF(t *testing.T) {
	idleBytesCase(t, "\r\n", true)
}
