package upstream

import (
	"bytes"
	"errors"
	"io"
)

// nextChunk reads the CRLF that ends the previous chunk's data and the
// next chunk's size line; after the last chunk (size 0), the trailers,
// and sets ended.
func (b *h1Body) nextChunk() error {
	if b.needCRLF {
		l, err := b.line()
		if err != nil {
			return err
		}
		if len(l) != 0 {
			return errors.New("upstream answer: malformed chunk end")
		}
		b.needCRLF = false
	}
	l, err := b.line()
	if err != nil {
		return err
	}
	size, ok := chunkSize(l)
	if !ok {
		return errors.New("upstream answer: malformed chunk size")
	}
	if size > 0 {
		b.left, b.inChunk = size, true
		return nil
	}
	for { // trailers, up to the blank line
		l, err := b.line()
		if err != nil {
			return err
		}
		if len(l) == 0 {
			b.ended = true
			return nil
		}
	}
}

// chunkSize parses a chunk-size line: hex digits, then optional
// whitespace (RFC 9112's BWS) and extensions, which are ignored. Anything
// else after the digits makes the line malformed, as it does for
// net/http.
func chunkSize(l []byte) (int, bool) {
	size, i := 0, 0
	for ; i < len(l); i++ {
		c := l[i]
		var d int
		switch {
		case '0' <= c && c <= '9':
			d = int(c - '0')
		case 'a' <= c && c <= 'f':
			d = int(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = int(c-'A') + 10
		default:
			if i == 0 {
				return 0, false
			}
			for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
				i++
			}
			return size, i == len(l) || l[i] == ';'
		}
		if size > 1<<40 {
			return 0, false
		}
		size = size<<4 | d
	}
	return size, i > 0
}

// line reads one CRLF-terminated line and returns it without the CRLF,
// valid until the next read of the connection.
func (b *h1Body) line() ([]byte, error) {
	c := b.c
	seen := 0 // of buf[r:w], searched already
	for {
		if i := bytes.Index(c.buf[c.r+seen:c.w], crlf); i >= 0 {
			l := c.buf[c.r : c.r+seen+i]
			c.r += seen + i + len(crlf)
			if bytes.IndexByte(l, '\n') >= 0 || bytes.IndexByte(l, '\r') >= 0 {
				return nil, errors.New("upstream answer: bare CR or LF in a chunk line")
			}
			return l, nil
		}
		if c.w-c.r >= h1MaxChunkLineLen {
			return nil, errors.New("upstream answer: chunk line too long")
		}
		seen = max(0, c.w-c.r-len(crlf)+1)
		if ok, err := b.buffered(); err != nil {
			return nil, unexpected(err)
		} else if ok {
			continue
		}
		b.beforeSocketRead()
		if err := c.fill(); err != nil {
			return nil, unexpected(err)
		}
	}
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
