package protocol

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// TestLineReaderReadsAsBufio: on the same bytes, delivered in any pieces
// and ending in any error, readSlice returns what bufio.Reader.ReadSlice
// returns, long lines (ErrBufferFull) included.
func TestLineReaderReadsAsBufio(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	boom := errors.New("boom")
	sources := map[string]func([]byte) io.Reader{
		"whole":      func(b []byte) io.Reader { return bytes.NewReader(b) },
		"one byte":   func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
		"half":       func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
		"data + EOF": func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) },
		"error":      func(b []byte) io.Reader { return io.MultiReader(bytes.NewReader(b), iotest.ErrReader(boom)) },
	}
	for round := range 50 {
		var in []byte
		for range rng.IntN(40) {
			in = append(in, bytes.Repeat([]byte{'a' + byte(rng.IntN(26))}, rng.IntN(3000))...)
			in = append(in, "\n\r\n"[rng.IntN(3):]...)
		}
		for name, src := range sources {
			for _, size := range []int{16, readBuffer} {
				br := bufio.NewReaderSize(src(in), size)
				lr := newLineReader(src(in), size)
				for i := 0; ; i++ {
					wl, werr := br.ReadSlice('\n')
					gl, gerr := lr.readSlice()
					if !bytes.Equal(gl, wl) || !errors.Is(gerr, werr) && gerr != werr {
						t.Fatalf("round %d, %s, size %d, line %d: got %q, %v; bufio %q, %v", round, name, size, i, clip(gl), gerr, clip(wl), werr)
					}
					if werr != nil && werr != bufio.ErrBufferFull {
						break
					}
				}
			}
		}
	}
}

func clip(b []byte) []byte {
	if len(b) > 40 {
		return append(b[:20:20], "..."...)
	}
	return b
}

// waitingSource hands out its parts one per Read and, on the Read after
// the last, records what the reader held while it would wait.
type waitingSource struct {
	parts   []string
	lr      *lineReader
	waitLen int  // len(p) of the Read that would wait
	held    bool // whether the reader held a buffer then
}

func (s *waitingSource) Read(p []byte) (int, error) {
	if len(s.parts) == 0 {
		s.waitLen, s.held = len(p), s.lr.buf != nil
		return 0, io.EOF
	}
	n := copy(p, s.parts[0])
	s.parts[0] = s.parts[0][n:]
	if s.parts[0] == "" {
		s.parts = s.parts[1:]
	}
	return n, nil
}

// TestReaderWaitsWithoutABuffer: once every buffered byte is read, a
// stream's reader gives its buffer back and waits with a one-byte read.
func TestReaderWaitsWithoutABuffer(t *testing.T) {
	src := &waitingSource{parts: []string{"event: a\ndata: {\"x\":1}\n\n", "data: {\"y\":2}\n\n"}}
	r := NewReader(src, 0)
	src.lr = &r.lines
	for _, want := range []string{`{"x":1}`, `{"y":2}`} {
		ev, err := r.Next()
		if err != nil || string(ev.Data) != want {
			t.Fatalf("Next = %v, %v; want data %s", ev, err, want)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next at the end: %v, want EOF", err)
	}
	if src.waitLen != 1 || src.held {
		t.Fatalf("waiting for more, the reader read %d bytes holding a buffer: %v; want 1 byte and no buffer", src.waitLen, src.held)
	}
}
