package engine

import (
	"bytes"
	"strings"
	"testing"
)

// TestRelayHoldsNoOutputBufferBetweenFlushes: what emit gathers goes out in
// one write at flush, and the buffer goes back to the pool then, so a
// stream waiting for its next event holds none; a burst's oversized buffer
// is not pooled.
func TestRelayHoldsNoOutputBufferBetweenFlushes(t *testing.T) {
	var w countingWriter
	s := &relayState{r: &request{}, w: &w}
	s.emit([]byte("data: {\"a\":1}\n\n"))
	s.emit([]byte("data: {\"b\":2}\n\n"))
	if s.out == nil || s.pending() != 30 {
		t.Fatalf("after two events: %d bytes pending, want 30", s.pending())
	}
	s.flush()
	if w.writes != 1 || w.String() != "data: {\"a\":1}\n\ndata: {\"b\":2}\n\n" {
		t.Fatalf("flush wrote %d times: %q; want the two events in one write", w.writes, w.String())
	}
	if s.out != nil || s.pending() != 0 {
		t.Fatal("after the flush the relay still holds its output buffer")
	}
	s.flush() // nothing gathered: no write
	if w.writes != 1 {
		t.Fatalf("an empty flush wrote (%d writes)", w.writes)
	}

	s.emit([]byte(strings.Repeat("x", 3*keepOut)))
	big := s.out
	s.flush()
	for range 100 {
		if got := outBufs.Get().(*outBuf); got == big {
			t.Fatal("a burst's buffer went back to the pool")
		}
	}
}

type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}
