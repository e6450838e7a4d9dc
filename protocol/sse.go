package protocol

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// ErrEventTooLarge is returned when one SSE event exceeds the reader's limit:
// a hostile or broken upstream must not make ccload buffer without bound.
var ErrEventTooLarge = errors.New("sse: event exceeds size limit")

// Event is one server-sent event. Its slices point into the Reader's buffer
// and are valid only until the next call to Next.
type Event struct {
	Name []byte // the "event:" field, nil when absent
	Data []byte // the "data:" lines joined by "\n"
	Raw  []byte // the whole block as received, including the blank line that ends it
}

// IsDone reports whether the event is OpenAI's "data: [DONE]" terminator.
func (e *Event) IsDone() bool { return bytes.Equal(e.Data, doneData) }

var doneData = []byte("[DONE]")

// Reader splits an SSE byte stream into events without copying a byte more
// than once. It accepts \n, \r\n and \r line ends, comment lines and
// unterminated final events.
type Reader struct {
	lines lineReader
	max   int
	raw   []byte
	data  []byte
	long  []byte // a line longer than the read buffer, gathered
	ev    Event
}

// DefaultMaxEvent bounds one event (a big tool-call argument or an image
// echoed back can be large, but never this large).
const DefaultMaxEvent = 16 << 20

// readBuffer is the Reader's buffer: a few typical event lines (200-600
// bytes). A longer line is gathered in pieces, and the upstream connection
// has its own buffer underneath. The buffer is pooled and held only while
// it holds unread bytes (lineReader), so a stream waiting for its next
// event holds none.
const readBuffer = 1 << 10

// NewReader reads events from r; max <= 0 means DefaultMaxEvent.
func NewReader(r io.Reader, max int) *Reader { return NewReaderSize(r, max, readBuffer) }

// NewReaderSize is NewReader with a buffer of size bytes (at least 16):
// size len(b) suits events already in memory.
func NewReaderSize(r io.Reader, max, size int) *Reader {
	if max <= 0 {
		max = DefaultMaxEvent
	}
	return &Reader{lines: newLineReader(r, size), max: max}
}

// Next returns the next event that carries any field, or io.EOF at the end
// of the stream. A final event without its blank line is still returned.
func (r *Reader) Next() (*Event, error) {
	r.raw = r.raw[:0]
	for {
		line, err := r.readLine()
		if len(line) > 0 {
			r.raw = append(r.raw, line...)
			if len(r.raw) > r.max {
				return nil, ErrEventTooLarge
			}
			if isBlank(line) {
				if r.parse() {
					return &r.ev, nil
				}
				r.raw = r.raw[:0] // stray blank lines between events
			}
		}
		if err != nil {
			if err == io.EOF && len(r.raw) > 0 && r.parse() {
				return &r.ev, nil
			}
			return nil, err
		}
	}
}

// readLine returns one line including its terminator, bounded by max.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.lines.readSlice()
	if err != bufio.ErrBufferFull {
		return line, err
	}
	// Long line: gather it in pieces, still bounded, in a buffer kept for
	// the next one (the caller copies the line out before reading on).
	r.long = append(r.long[:0], line...)
	for err == bufio.ErrBufferFull {
		if len(r.long)+len(r.raw) > r.max {
			return nil, ErrEventTooLarge
		}
		line, err = r.lines.readSlice()
		r.long = append(r.long, line...)
	}
	return r.long, err
}

func isBlank(line []byte) bool {
	return len(line) == 1 && (line[0] == '\n' || line[0] == '\r') ||
		len(line) == 2 && line[0] == '\r' && line[1] == '\n'
}

// parse fills r.ev from r.raw and reports whether the block had any field.
func (r *Reader) parse() bool {
	r.ev = Event{Raw: r.raw}
	r.data = r.data[:0]
	dataLines := 0
	var single []byte
	fields := false
	rest := r.raw
	for len(rest) > 0 {
		i := bytes.IndexAny(rest, "\r\n")
		var line []byte
		if i < 0 {
			line, rest = rest, nil
		} else {
			line = rest[:i]
			if rest[i] == '\r' && i+1 < len(rest) && rest[i+1] == '\n' {
				i++
			}
			rest = rest[i+1:]
		}
		if len(line) == 0 || line[0] == ':' {
			continue
		}
		name, value := line, []byte(nil)
		if c := bytes.IndexByte(line, ':'); c >= 0 {
			name, value = line[:c], line[c+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(name) {
		case "event":
			r.ev.Name = value
			fields = true
		case "data":
			fields = true
			dataLines++
			if dataLines == 1 {
				single = value
			} else {
				if dataLines == 2 {
					r.data = append(r.data, single...)
				}
				r.data = append(r.data, '\n')
				r.data = append(r.data, value...)
			}
		case "id", "retry":
			fields = true
		}
	}
	if dataLines == 1 {
		r.ev.Data = single
	} else if dataLines > 1 {
		r.ev.Data = r.data
	}
	return fields
}

// AppendEvent appends one SSE block with an optional event name and
// single-line JSON data, as every family's encoder writes it.
func AppendEvent(dst []byte, name string, data []byte) []byte {
	if name != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}
