//go:build linux && !ccload_portable

package listen

import (
	"io"
	"testing"
)

// TestAheadConnReadsAheadOnOneByteReads: the one-byte read takes in all
// that arrived; the next reads are served from it, then from the socket.
func TestAheadConnReadsAheadOnOneByteReads(t *testing.T) {
	client, c := aheadPair(t)
	if _, err := client.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	var one [1]byte
	if n, err := c.Read(one[:]); n != 1 || err != nil || one[0] != 'G' {
		t.Fatalf("one-byte read = %d, %v, %q; want 1, nil, 'G'", n, err, one[0])
	}
	if c.ahead == nil || c.end-c.off != len("ET / HTTP/1.1\r\n\r\n") {
		t.Fatalf("after the one-byte read, %d bytes read ahead; want the rest of the request", c.end-c.off)
	}
	buf := make([]byte, 4)
	var got []byte
	for c.ahead != nil {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != "ET / HTTP/1.1\r\n\r\n" {
		t.Fatalf("read %q after the first byte", got)
	}
	// Nothing is held now; a later request is read from the socket.
	if _, err := client.Write([]byte("next")); err != nil {
		t.Fatal(err)
	}
	if n, err := io.ReadFull(c, buf); n != 4 || err != nil || string(buf) != "next" {
		t.Fatalf("read after the bytes read ahead: %q, %v", buf[:n], err)
	}
}
