package upstream

import (
	"strconv"
	"strings"
	"sync"
)

// h1Req is a request's head being built: the headers rq.header sets, then
// the encoded request line and headers (and the body when small).
type h1Req struct {
	kv   [][2]string
	buf  []byte
	body []byte // written after buf; nil when buf holds it
}

var h1Reqs = sync.Pool{New: func() any { return &h1Req{kv: make([][2]string, 0, 16), buf: make([]byte, 0, 2<<10)} }}

func (r *h1Req) release() {
	clear(r.kv)
	r.kv, r.body = r.kv[:0], nil
	if cap(r.buf) > h1OneWrite+4<<10 {
		r.buf = make([]byte, 0, 2<<10) // an agent's large body is not kept
	}
	r.buf = r.buf[:0]
	h1Reqs.Put(r)
}

func (r *h1Req) Add(k, v string) { r.kv = append(r.kv, [2]string{k, v}) }

func (r *h1Req) Set(k, v string) {
	r.Del(k)
	r.Add(k, v)
}

func (r *h1Req) Del(k string) {
	kept := r.kv[:0]
	for _, kv := range r.kv {
		if !strings.EqualFold(kv[0], k) {
			kept = append(kept, kv)
		}
	}
	clear(r.kv[len(kept):])
	r.kv = kept
}

// encode writes the request line and headers, with the body when the
// whole request fits one write. Framing is this client's (Content-Length,
// no Transfer-Encoding or Connection from rq.header); a Host set by a
// channel's rewrite rule replaces the URL's. A value's line breaks become
// spaces and a name that is not a token is left out, so nothing set here
// can split the request.
func (r *h1Req) encode(t h1Target, body []byte) {
	host := t.host
	for _, kv := range r.kv {
		if strings.EqualFold(kv[0], "Host") {
			host = kv[1]
		}
	}
	b := append(r.buf[:0], "POST "...)
	b = append(b, t.uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = appendHeaderValue(b, host)
	b = append(b, "\r\n"...)
	for _, kv := range r.kv {
		if !validHeaderName(kv[0]) || framingHeader(kv[0]) {
			continue
		}
		b = append(b, kv[0]...)
		b = append(b, ": "...)
		b = appendHeaderValue(b, kv[1])
		b = append(b, "\r\n"...)
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	if len(b)+len(body) <= h1OneWrite {
		b = append(b, body...)
		r.body = nil
	} else {
		r.body = body
	}
	r.buf = b
}

func framingHeader(name string) bool {
	return strings.EqualFold(name, "Host") || strings.EqualFold(name, "Content-Length") ||
		strings.EqualFold(name, "Transfer-Encoding") || strings.EqualFold(name, "Connection")
}

func appendHeaderValue(b []byte, v string) []byte {
	if !strings.ContainsAny(v, "\r\n") {
		return append(b, v...)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return b
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !tokenBytes[name[i]] {
			return false
		}
	}
	return true
}

// tokenBytes marks the bytes an RFC 9110 token may hold.
var tokenBytes = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()
