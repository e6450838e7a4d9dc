package engine

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// aheadPair is a connected pair: the accepted side through Listener.
func aheadPair(t *testing.T) (client net.Conn, server *aheadConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	c, err := Listener(ln).Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	server, ok := c.(*aheadConn)
	if !ok {
		t.Fatalf("Accept gave %T, want *aheadConn", c)
	}
	return client, server
}

func TestAheadConnOneByteReadWaitsAndEnds(t *testing.T) {
	client, c := aheadPair(t)
	go func() {
		time.Sleep(50 * time.Millisecond) // the read below waits for it
		client.Write([]byte("x"))
		client.Close()
	}()
	var one [1]byte
	if n, err := c.Read(one[:]); n != 1 || err != nil || one[0] != 'x' {
		t.Fatalf("one-byte read = %d, %v, %q", n, err, one[0])
	}
	if c.ahead != nil {
		t.Fatal("a single byte arrived, yet a buffer is held")
	}
	if n, err := c.Read(one[:]); n != 0 || err != io.EOF {
		t.Fatalf("read after the peer closed = %d, %v; want io.EOF", n, err)
	}
}

func TestAheadConnOneByteReadKeepsDeadlines(t *testing.T) {
	_, c := aheadPair(t)
	if err := c.SetReadDeadline(time.Now().Add(30 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	var one [1]byte
	_, err := c.Read(one[:])
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("one-byte read past the deadline: %v; want a timeout", err)
	}
	c.Close()
	if _, err := c.Read(one[:]); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("one-byte read on a closed connection: %v; want net.ErrClosed", err)
	}
}

// BenchmarkOneByteRead is fasthttp's read of a keep-alive request: one
// byte, then the rest, here a 400-byte request already arrived.
func BenchmarkOneByteRead(b *testing.B) {
	req := make([]byte, 400)
	for _, ahead := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "ahead"}[ahead]
		b.Run(name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			if ahead {
				ln = Listener(ln)
			}
			client, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer client.Close()
			server, err := ln.Accept()
			if err != nil {
				b.Fatal(err)
			}
			defer server.Close()
			var one [1]byte
			buf := make([]byte, 4095)
			for b.Loop() {
				if _, err := client.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := server.Read(one[:]); err != nil {
					b.Fatal(err)
				}
				for got := 1; got < len(req); {
					n, err := server.Read(buf)
					if err != nil {
						b.Fatal(err)
					}
					got += n
				}
			}
		})
	}
}
