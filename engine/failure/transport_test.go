package failure

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The transport cases use real errors from the standard library's dialer,
// resolver, TLS stack and HTTP client, not hand-made values.

// get sends one GET with a client that never reuses connections.
func get(ctx context.Context, url string) error {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
		return errors.New("unexpected response")
	}
	return err
}

// serve accepts connections on a loopback port and hands each to handle.
func serve(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
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
			go handle(c)
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

// refusedErr dials a port that was just closed: ECONNREFUSED.
func refusedErr(t *testing.T) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = net.Dial("tcp", addr)
	if err == nil {
		t.Skip("a closed port accepted a connection")
	}
	return err
}

// dnsErr resolves a name under .invalid (RFC 6761), which never exists.
func dnsErr(t *testing.T) error {
	_, err := net.Dial("tcp", "ccload-test.invalid:443")
	var de *net.DNSError
	if !errors.As(err, &de) {
		t.Fatalf("want a *net.DNSError, got %v", err)
	}
	if de.IsTimeout || de.IsTemporary {
		t.Skipf("no usable resolver here: %v", err)
	}
	return err
}

// tlsErr talks to a TLS server whose certificate nobody trusts.
func tlsErr(t *testing.T) error {
	s := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(s.Close)
	s.Config.ErrorLog = discardLog()
	return get(context.Background(), s.URL)
}

// resetErr gets a TCP RST after the request was sent, before any header.
func resetErr(t *testing.T) error {
	url := serve(t, func(c net.Conn) {
		c.Read(make([]byte, 4096))
		c.(*net.TCPConn).SetLinger(0) // close with RST
		c.Close()
	})
	return get(context.Background(), url)
}

// eofErr gets an orderly close after the request was sent, before any header.
func eofErr(t *testing.T) error {
	url := serve(t, func(c net.Conn) {
		c.Read(make([]byte, 4096))
		c.Close()
	})
	err := get(context.Background(), url)
	if !errors.Is(err, io.EOF) {
		t.Logf("want io.EOF in the chain, got %v", err)
	}
	return err
}

// deadlineErr waits on a server that never answers, under a short deadline.
func deadlineErr(t *testing.T) error {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	url := serve(t, func(c net.Conn) { <-block; c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	return get(ctx, url)
}

// canceledErr is what the engine sees when it cancels an attempt because
// the client left.
func canceledErr(t *testing.T) error {
	url := serve(t, func(c net.Conn) { c.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return get(ctx, url)
}

// fasthttpDialTimeout has the text of fasthttp.ErrDialTimeout, a plain error
// without a Timeout method.
func fasthttpDialTimeout(*testing.T) error {
	return errors.New("fasthttp: dialing to the given tcp address timed out")
}

func discardLog() *log.Logger { return log.New(io.Discard, "", 0) }
