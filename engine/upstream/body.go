package upstream

import (
	"context"
	"io"
	"sync"
	"time"
)

// h1Body is an answer's body as an io.ReadCloser: whole when it came with
// the headers, else read from the connection as it arrives. When the
// attempt's context ends, the connection is closed under a waiting Read
// (which then fails with the context's cause).
type h1Body struct {
	u      *h1Client
	c      *h1Conn // nil when the body came whole
	ctx    context.Context
	timers Timers // the attempt's, armed with the body

	whole []byte // the body when it came whole
	off   int    // read offset in whole

	size    int // Content-Length; -1 chunked, -2 until close
	left    int // of size, or of the current chunk when chunked
	chunked bool
	// Chunked: inChunk while a chunk's data is read (left counts it),
	// needCRLF once it is, ended after the last chunk and its trailers.
	inChunk, needCRLF, ended bool
	err                      error

	// beforeRead, while a stream's relay reads the body, runs before each
	// read of the socket (BeforeWait).
	beforeRead func()
	// armed: the attempt's end interrupts a read (stop is set) and, with
	// liftDeadline, the header deadline no longer bounds the body.
	armed, liftDeadline bool

	mu       sync.Mutex
	stop     func() bool // unregisters interrupt; nil until armed
	closed   bool
	released bool // read to its end: c went back to the pool or was closed
}

// Whole is the body when it came whole with the headers, ok false
// otherwise. The bytes are the body's own.
func (b *h1Body) Whole() ([]byte, bool) { return b.whole, b.whole != nil }

// Size is the body's announced length, or a negative number when it was
// not announced.
func (b *h1Body) Size() int { return b.size }

// BeforeWait makes f run before each read of the body that has to go to
// the socket; nil stops it. It reports whether it can (a streamed body).
// The relay's flush then happens once per socket read: events that arrived
// together go out in one write (perf).
func (b *h1Body) BeforeWait(f func()) bool {
	if b.whole != nil || b.c.private {
		return false
	}
	b.beforeRead = f
	return true
}

// buffered reads, for a streamed body, what the connection holds already
// without reading the socket (fillBuffered): the events that came
// together then go out together, before a read that may wait.
func (b *h1Body) buffered() (bool, error) {
	if b.beforeRead == nil {
		return false, nil
	}
	return b.c.fillBuffered()
}

// beforeSocketRead runs before each read of the body that may wait for
// the upstream.
func (b *h1Body) beforeSocketRead() {
	if !b.armed {
		b.arm()
	}
	if b.beforeRead != nil {
		b.beforeRead()
	}
}

// arm readies the body for a read that may wait: the attempt's timers
// start (attemptTimers), its end (a timer, the client leaving) interrupts
// the read, and the timers bound it instead of the header deadline. Done
// at the first read that goes to the socket, not with the headers: a small
// answer arrives whole with them, and then the timers, the context hook
// and the deadline would be spent for nothing (perf).
func (b *h1Body) arm() {
	b.armed = true
	arm(b.timers)
	b.mu.Lock()
	if !b.closed {
		b.stop = context.AfterFunc(b.ctx, b.interrupt)
	}
	b.mu.Unlock()
	if b.liftDeadline {
		_ = b.c.setDeadline(time.Time{}) // a closed conn fails the Read anyway
	}
}

// interrupt runs when the attempt's context ends.
func (b *h1Body) interrupt() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed && !b.released {
		b.c.close()
	}
}

func (b *h1Body) Read(p []byte) (int, error) {
	if b.whole != nil {
		if b.off >= len(b.whole) {
			return 0, io.EOF
		}
		n := copy(p, b.whole[b.off:])
		b.off += n
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := b.read(p)
	switch {
	case err == io.EOF:
		b.err = io.EOF
		b.done()
	case err != nil:
		if cause := context.Cause(b.ctx); cause != nil {
			err = cause
		}
		b.err = err
	}
	return n, err
}

// read reads the next bytes of the body, io.EOF at its end.
func (b *h1Body) read(p []byte) (int, error) {
	if b.chunked && !b.inChunk {
		if b.ended {
			return 0, io.EOF
		}
		if err := b.nextChunk(); err != nil {
			return 0, err
		}
		if b.ended {
			return 0, io.EOF
		}
	}
	if b.size >= 0 || b.chunked {
		if b.left == 0 {
			return 0, io.EOF
		}
		p = p[:min(len(p), b.left)]
	}
	n, err := b.data(p)
	if b.size >= 0 || b.chunked {
		b.left -= n
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if b.chunked && b.left == 0 {
			b.inChunk, b.needCRLF = false, true
		}
	}
	if n > 0 {
		return n, nil
	}
	return 0, err
}

// data reads what is buffered, or else from the socket: straight into p
// when p is large, so a long answer is not copied twice.
func (b *h1Body) data(p []byte) (int, error) {
	c := b.c
	if c.r == c.w {
		if ok, err := b.buffered(); err != nil {
			return 0, err
		} else if !ok {
			b.beforeSocketRead()
			if len(p) >= len(c.buf) {
				return c.readSock(p)
			}
			if err := c.fill(); err != nil {
				return 0, err
			}
		}
	}
	n := copy(p, c.buf[c.r:c.w])
	c.r += n
	return n, nil
}

// done hands a body read to its end back: its connection to the pool.
// Only the goroutine reading the body calls it.
func (b *h1Body) done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.released {
		return
	}
	b.released = true
	if b.stop != nil && !b.stop() {
		// interrupt ran or is running: the connection is closed.
		b.stop = nil
		return
	}
	b.stop = nil
	if b.chunked || b.size >= 0 {
		b.u.put(b.c)
	} else {
		b.c.close()
	}
}

// Close hands a fully read connection back to the pool (done did), or
// drops one whose body was not read to its end. It may run beside a Read
// that waits, which then fails.
func (b *h1Body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop != nil {
		b.stop()
		b.stop = nil
	}
	if b.closed {
		return nil
	}
	b.closed = true
	if b.c != nil && !b.released {
		b.c.close()
	}
	return nil
}
