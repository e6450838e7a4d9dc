package upstream

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
)

var (
	crlf     = []byte("\r\n")
	crlfcrlf = []byte("\r\n\r\n")
)

// Header is an answer's headers, looked up as http.Header.Get does
// (case-insensitive, the first of repeated names).
type Header struct {
	kv      [][2]string
	length  int  // Content-Length, -1 when absent
	chunked bool // Transfer-Encoding ends in chunked
	close   bool // the upstream closes the connection after the answer
	// untilClose: a Transfer-Encoding other than chunked, so the body
	// ends with the connection.
	untilClose bool
	// inline holds kv's first pairs: one allocation for a usual answer's
	// headers.
	inline [8][2]string
}

// Fields are the header fields in the order they came, each a name and
// its value; the slice is the Header's own, for reading only. A walk of
// them finds several names at once where a Get per name would walk them
// each time.
func (h *Header) Fields() [][2]string { return h.kv }

// Get is the value of the first field named name (any case), "" if none.
func (h *Header) Get(name string) string {
	for _, kv := range h.kv {
		if len(kv[0]) == len(name) && strings.EqualFold(kv[0], name) {
			return kv[1]
		}
	}
	return ""
}

var errMalformedHeader = errors.New("upstream answer: malformed header")

// ParseHead parses a header block (status line, headers, blank line).
func ParseHead(block []byte) (*Header, int, error) {
	if bareLineEnd(block) {
		// net/http ends a line there: read as part of a value, the same
		// bytes would frame the answer differently.
		return nil, 0, errors.New("upstream answer: bare CR or LF in the head")
	}
	line, rest, _ := bytes.Cut(block, crlf)
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[7] < '0' || line[7] > '9' ||
		line[8] != ' ' || (len(line) > 12 && line[12] != ' ') {
		return nil, 0, errors.New("upstream answer: malformed status line")
	}
	status := 0
	for _, d := range line[9:12] {
		if d < '0' || d > '9' {
			return nil, 0, errors.New("upstream answer: malformed status code")
		}
		status = status*10 + int(d-'0')
	}
	if status < 100 {
		// Not a status (RFC 9110 §15); read as an interim answer it would
		// be skipped and the next bytes taken for the answer.
		return nil, 0, errors.New("upstream answer: malformed status code")
	}
	h := &Header{length: -1, close: line[7] == '0'}
	h.kv = h.inline[:0]
	all := string(rest) // one string for every name and value
	for {
		i := strings.Index(all, "\r\n")
		if i <= 0 {
			break // the blank line (the block ends with one)
		}
		l := all[:i]
		all = all[i+2:]
		if controlByte(l) {
			return nil, 0, errMalformedHeader // as net/http: no control bytes but tab
		}
		if l[0] == ' ' || l[0] == '\t' {
			if len(h.kv) == 0 {
				return nil, 0, errMalformedHeader
			}
			// An obsolete line folding: part of the previous value,
			// joined with a space as net/http joins it (an empty
			// continuation leaves that space at the end).
			v := &h.kv[len(h.kv)-1][1]
			*v = strings.TrimLeft(*v+" "+trimOWS(l), " \t")
			continue
		}
		colon := strings.IndexByte(l, ':')
		if colon <= 0 || !validHeaderName(l[:colon]) {
			return nil, 0, errMalformedHeader
		}
		h.kv = append(h.kv, [2]string{l[:colon], trimOWS(l[colon+1:])})
	}
	// The framing fields are read once all lines are in: a folded line
	// belongs to the value before it.
	for _, kv := range h.kv {
		name, value := kv[0], kv[1]
		switch { // by length first: most names are none of these
		case len(name) == len("Content-Length") && strings.EqualFold(name, "Content-Length"):
			v, ok := parseLength(value)
			if !ok || (h.length >= 0 && h.length != v) {
				return nil, 0, errors.New("upstream answer: bad Content-Length")
			}
			h.length = v
		case len(name) == len("Transfer-Encoding") && strings.EqualFold(name, "Transfer-Encoding"):
			codings := strings.Split(value, ",")
			h.chunked = strings.EqualFold(strings.TrimSpace(codings[len(codings)-1]), "chunked")
			if !h.chunked {
				h.untilClose = true // read to the end of the connection
			}
		case len(name) == len("Connection") && strings.EqualFold(name, "Connection"):
			for _, tok := range strings.Split(value, ",") {
				switch tok = strings.TrimSpace(tok); {
				case strings.EqualFold(tok, "close"):
					h.close = true
				case strings.EqualFold(tok, "keep-alive") && line[7] == '0':
					h.close = false
				}
			}
		}
	}
	if h.chunked || h.untilClose {
		h.length = -1 // Transfer-Encoding wins (RFC 9112 §6.3)
	}
	return h, status, nil
}

// trimOWS trims the spaces and tabs around a header value.
func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// parseLength parses a Content-Length value: decimal digits only
// (strconv.Atoi would take a sign, "+2", which net/http and RFC 9110
// refuse, and which another reader of the same bytes may frame
// differently).
func parseLength(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	// Leading zeros are allowed, as net/http allows them; what is left
	// must fit in an int (63 bits, as in net/http, on 64-bit platforms).
	n, err := strconv.ParseUint(s, 10, strconv.IntSize-1)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

// bareLineEnd reports whether b holds a CR or an LF that is not part of a
// CRLF.
func bareLineEnd(b []byte) bool {
	for i, c := range b {
		switch {
		case c == '\n' && (i == 0 || b[i-1] != '\r'):
			return true
		case c == '\r' && (i+1 == len(b) || b[i+1] != '\n'):
			return true
		}
	}
	return false
}

// controlByte reports whether a header line holds a control byte other
// than a tab.
func controlByte(l string) bool {
	for i := 0; i < len(l); i++ {
		if c := l[i]; c < ' ' && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}
