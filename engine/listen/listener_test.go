package listen

import (
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/wait"
)

// waiter is a request waiting on a connection: gone is set when it is
// told its client hung up.
type waiter struct{ gone atomic.Bool }

func (w *waiter) HungUp() { w.gone.Store(true) }

// aheadPair is a connected pair: the accepted side through Listener.
func aheadPair(t *testing.T) (client net.Conn, server *Conn) {
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
	server, ok := c.(*Conn)
	if !ok {
		t.Fatalf("Accept gave %T, want *Conn", c)
	}
	return client, server
}

// TestListenerWatchTellsHangUp: on every platform, a waiter is told when
// its client closes, and a waiter that comes after the hang-up is told at
// once.
func TestListenerWatchTellsHangUp(t *testing.T) {
	client, c := aheadPair(t)
	r := &waiter{}
	c.Watch(r)
	client.Close()
	wait.Eventually(t, 5*time.Second, "the waiter told of the hang-up", r.gone.Load)
	c.Unwatch(r)
	late := &waiter{}
	c.Watch(late)
	if !late.gone.Load() {
		t.Fatal("a waiter that came after the hang-up was not told")
	}
	c.Unwatch(late)
}

// TestListenerUnwatchKeepsNextWaiter: a request that ends after the next
// one on its connection began watching must not take the next one's
// place.
func TestListenerUnwatchKeepsNextWaiter(t *testing.T) {
	client, c := aheadPair(t)
	first, next := &waiter{}, &waiter{}
	c.Watch(first)
	c.Watch(next)
	c.Unwatch(first)
	client.Close()
	wait.Eventually(t, 5*time.Second, "the next waiter told of the hang-up", next.gone.Load)
	if first.gone.Load() {
		t.Fatal("a waiter told after its Unwatch")
	}
	c.Unwatch(next)
}

// TestListenerFindsConnByAddress: Find gives the accepted connection back
// from its address pair while it is open, and nothing once it closed.
func TestListenerFindsConnByAddress(t *testing.T) {
	client, c := aheadPair(t)
	if got := Find(c.LocalAddr(), c.RemoteAddr()); got != c {
		t.Fatalf("Find(local, remote) = %p, want the accepted %p", got, c)
	}
	if got := Find(c.RemoteAddr(), c.LocalAddr()); got != nil {
		t.Fatalf("Find with the addresses swapped = %p, want nil", got)
	}
	c.Close()
	if got := Find(client.RemoteAddr(), client.LocalAddr()); got != nil {
		t.Fatalf("Find after Close = %p, want nil", got)
	}
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
