//go:build linux && !ccload_portable

package rawsock

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// rawPair is a connected TCP pair whose accepted side is read and written
// through a Conn.
func rawPair(t *testing.T) (client net.Conn, server net.Conn, s *Conn) {
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
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	s = New(server)
	if s == nil {
		t.Fatal("New of a TCP connection is nil")
	}
	return client, server, s
}

// TestRawSockMovesBytesBothWays: a write far larger than the socket's
// buffers waits for the reader (EAGAIN, then the netpoller) and arrives
// whole and in order, while a read runs on the same socket at once.
func TestRawSockMovesBytesBothWays(t *testing.T) {
	client, _, s := rawPair(t)
	out := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	in := bytes.Repeat([]byte("request;"), 1<<15)          // 256 KiB

	type result struct {
		n   int
		err error
	}
	wrote := make(chan result, 1)
	go func() {
		n, err := s.Write(out)
		wrote <- result{n, err}
	}()
	go func() { client.Write(in) }()

	got := make([]byte, 0, len(in))
	buf := make([]byte, 7000)
	for len(got) < len(in) {
		n, err := s.Read(buf)
		if err != nil {
			t.Fatalf("Read after %d bytes: %v", len(got), err)
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Equal(got, in) {
		t.Fatal("the bytes read differ from the bytes the client sent")
	}

	time.Sleep(50 * time.Millisecond) // let the writer fill the buffers and wait
	echo, err := io.ReadAll(io.LimitReader(client, int64(len(out))))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(echo, out) {
		t.Fatalf("client got %d bytes, not the %d written in order", len(echo), len(out))
	}
	if r := <-wrote; r.n != len(out) || r.err != nil {
		t.Fatalf("Write = %d, %v; want %d, nil", r.n, r.err, len(out))
	}
}

// TestRawSockErrorsAreNetConns: EOF, a deadline, a closed socket and a
// reset peer come back as net.Conn reports them, so fasthttp and the
// engine classify them as before.
func TestRawSockErrorsAreNetConns(t *testing.T) {
	t.Run("eof", func(t *testing.T) {
		client, _, s := rawPair(t)
		client.Close()
		if n, err := s.Read(make([]byte, 8)); n != 0 || err != io.EOF {
			t.Fatalf("Read after the peer closed = %d, %v; want 0, io.EOF", n, err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		_, server, s := rawPair(t)
		server.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, err := s.Read(make([]byte, 8))
		var oe *net.OpError
		if !errors.As(err, &oe) || oe.Op != "read" || !oe.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Read past its deadline = %#v; want a *net.OpError \"read\" that is a timeout", err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		_, server, s := rawPair(t)
		server.Close()
		if _, err := s.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Read of a closed socket = %v; want net.ErrClosed", err)
		}
		if _, err := s.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Write to a closed socket = %v; want net.ErrClosed", err)
		}
	})
	t.Run("reset", func(t *testing.T) {
		client, _, s := rawPair(t)
		client.(*net.TCPConn).SetLinger(0)
		client.Close() // RST
		var err error
		for range 100 { // the reset may take a write or two to be seen
			if _, err = s.Write(make([]byte, 64<<10)); err != nil {
				break
			}
		}
		var oe *net.OpError
		var se *os.SyscallError
		if !errors.As(err, &oe) || oe.Op != "write" || !errors.As(err, &se) || se.Syscall != "write" {
			t.Fatalf("Write to a reset peer = %#v; want a *net.OpError \"write\" around the write's *os.SyscallError", err)
		}
	})
	t.Run("not tcp", func(t *testing.T) {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		if s := New(a); s != nil {
			t.Fatal("New of a net.Pipe is not nil")
		}
	})
}
