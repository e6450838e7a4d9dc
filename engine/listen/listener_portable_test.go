//go:build !linux || ccload_portable

package listen

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/wait"
)

// TestPortableWatchNoticesHangUp: a client that closes while its request
// waits is seen by the watching read, and the request is told.
func TestPortableWatchNoticesHangUp(t *testing.T) {
	client, c := aheadPair(t)
	r := &waiter{}
	c.Watch(r)
	client.Close()
	wait.Eventually(t, 5*time.Second, "the hang-up", func() bool { return r.gone.Load() })
	c.Unwatch(r)
}

// TestPortableWatchKeepsPipelinedBytes: bytes that arrive while a request
// waits are no hang-up, and fasthttp's next Read gets them, in order.
func TestPortableWatchKeepsPipelinedBytes(t *testing.T) {
	client, c := aheadPair(t)
	r := &waiter{}
	c.Watch(r)
	if _, err := client.Write([]byte("GET /next HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	// The watching read has the bytes once its goroutine is done.
	wait.Eventually(t, 5*time.Second, "the watching read to take the bytes", func() bool {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		select {
		case <-c.watchDone:
			return true
		default:
			return false
		}
	})
	if r.gone.Load() {
		t.Fatal("bytes from the client counted as a hang-up")
	}
	c.Unwatch(r)
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "GET /next HTTP/1.1\r\n\r\n" {
		t.Fatalf("read after the watch: %q, %v", buf[:n], err)
	}
}

// TestPortableUnwatchRestoresDeadline: stopping the watching read moves
// the read deadline into the past; the deadline set before must be back,
// or fasthttp's next read would fail at once (or never time out).
func TestPortableUnwatchRestoresDeadline(t *testing.T) {
	client, c := aheadPair(t)
	if err := c.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	r := &waiter{}
	c.Watch(r)
	wait.Eventually(t, 5*time.Second, "the watching read to start", func() bool {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		return c.watchDone != nil
	})
	c.Unwatch(r)
	if r.gone.Load() {
		t.Fatal("stopping the watch counted as a hang-up")
	}
	go client.Write([]byte("x"))
	var one [1]byte
	if n, err := c.Read(one[:]); n != 1 || err != nil {
		t.Fatalf("read after unwatch: %d, %v; want the byte", n, err)
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := c.Read(one[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past a deadline set after the watch: %v", err)
	}
	client.Close()
	_ = c.SetReadDeadline(time.Time{})
	if _, err := c.Read(one[:]); err != io.EOF {
		t.Fatalf("read after the client closed: %v; want io.EOF", err)
	}
	var _ net.Conn = c
}
