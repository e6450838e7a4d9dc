package protocol

import (
	"bufio"
	"bytes"
	"io"
	"sync"
)

// lineReader is the part of bufio.Reader that Reader uses (ReadSlice of
// '\n'), with one difference: a reader with the default buffer size gives
// its buffer back to a pool whenever every byte in it has been read, and
// waits for the next byte with a one-byte read into itself. A stream spends
// nearly all its life waiting for its next event, so with thousands open
// that is a KiB each not held (perf: memory per stream). The
// one-byte read costs a call into the source, not a system call: the
// upstream connection's own buffer is underneath, and the byte and the rest
// of what arrived with it come from there.
type lineReader struct {
	src    io.Reader
	size   int
	pooled bool    // size is readBuffer: the buffer comes from and goes back to readBufs
	buf    *[]byte // nil while nothing is buffered (pooled readers only)
	r, w   int     // unread bytes are (*buf)[r:w]
	err    error   // the source's error, returned once the bytes before it are read
	one    [1]byte
}

var readBufs = sync.Pool{New: func() any {
	b := make([]byte, readBuffer)
	return &b
}}

// maxEmptyReads is as in bufio: a source that keeps returning nothing and no
// error is broken.
const maxEmptyReads = 100

func newLineReader(src io.Reader, size int) lineReader {
	size = max(size, 16)
	return lineReader{src: src, size: size, pooled: size == readBuffer}
}

// readSlice returns the bytes up to and including the next '\n', valid until
// the next call. Like bufio.Reader.ReadSlice it returns bufio.ErrBufferFull
// with a full buffer that holds no '\n', and the source's error with the
// bytes left before it.
func (l *lineReader) readSlice() ([]byte, error) {
	searched := 0
	for {
		if l.buf != nil {
			unread := (*l.buf)[l.r:l.w]
			if i := bytes.IndexByte(unread[searched:], '\n'); i >= 0 {
				l.r += searched + i + 1
				return unread[:searched+i+1], nil
			}
			searched = len(unread)
			if l.err == nil && len(unread) == l.size {
				l.r = l.w
				return unread, bufio.ErrBufferFull
			}
		}
		if l.err != nil {
			var rest []byte
			if l.buf != nil {
				rest = (*l.buf)[l.r:l.w]
				l.r = l.w
			}
			err := l.err
			l.err = nil
			return rest, err
		}
		l.fill()
	}
}

// fill reads more from the source: into the buffer after what is unread,
// or, with nothing unread, first one byte without a buffer. It is called
// only after the caller is done with every slice readSlice returned, so a
// buffer with nothing unread can go back to the pool.
func (l *lineReader) fill() {
	if l.buf != nil && l.r == l.w && l.pooled {
		readBufs.Put(l.buf)
		l.buf = nil
	}
	if l.buf == nil {
		n, err := l.read(l.one[:])
		if n == 0 {
			l.err = err
			return
		}
		if l.pooled {
			l.buf = readBufs.Get().(*[]byte)
		} else {
			b := make([]byte, l.size)
			l.buf = &b
		}
		(*l.buf)[0] = l.one[0]
		l.r, l.w = 0, 1
		l.err = err
		return
	}
	if l.r > 0 {
		l.w = copy(*l.buf, (*l.buf)[l.r:l.w])
		l.r = 0
	}
	n, err := l.read((*l.buf)[l.w:])
	l.w += n
	l.err = err
}

// read reads into p (not empty) until it gets a byte or an error.
func (l *lineReader) read(p []byte) (int, error) {
	for range maxEmptyReads {
		n, err := l.src.Read(p)
		if n > 0 || err != nil {
			return n, err
		}
	}
	return 0, io.ErrNoProgress
}
