package engine

import (
	"bytes"
	"strings"

	"github.com/valyala/fasthttp"
)

// Header forwarding rule (docs/security.md). A client header
// reaches a native upstream only when all of these hold:
//
//  1. it is not in dropRequestHeaders: the client's credentials (design §4:
//     a client token never leaves ccload), hop-by-hop headers (RFC 9110
//     §7.6.1), and headers the upstream client sets itself;
//  2. its name does not look like a credential: it contains none of
//     credentialWords (api-key, Anthropic-Api-Key, X-Upstream-Key,
//     X-Auth-Token, Proxy-Authorization, …);
//  3. it is not named in the request's Connection header (hop-by-hop by
//     declaration, RFC 9110 §7.6.1);
//  4. its name is a valid HTTP token and its value holds no control
//     character: anything else would make net/http refuse the upstream
//     request, and a client must never be able to fail (and so cool) an
//     upstream with what it sends.
//
// Accept-Encoding is dropped so Go's transport negotiates and decompresses
// gzip; forwarding the client's value would hand us compressed SSE we must
// parse. Content-Encoding is dropped because the body sent upstream is the
// one ccload read (and parsed) as it is: the client's label does not
// describe it.
//
// The account headers (OpenAI-Organization, OpenAI-Project,
// X-Goog-User-Project) pick what the channel's key is billed to; the key
// belongs to the channel, so a client's value would make the provider
// refuse the key and cool it. A channel that needs them sets them in its
// header rewrite rules, which apply after this filter.
var dropRequestHeaders = map[string]bool{
	"authorization": true, "x-api-key": true, "x-goog-api-key": true, "api-key": true,
	"cookie": true, "proxy-authorization": true,
	"connection": true, "keep-alive": true, "proxy-connection": true, "te": true,
	"trailer": true, "transfer-encoding": true, "upgrade": true,
	"host": true, "content-length": true, "accept-encoding": true,
	"x-forwarded-for": true, "x-real-ip": true, "forwarded": true,
	"x-forwarded-proto": true, "x-forwarded-host": true,
	"content-encoding": true, "openai-organization": true, "openai-project": true, "x-goog-user-project": true,
}

// credentialWords mark a header name as a credential wherever they appear
// in it.
var credentialWords = []string{
	"auth", "key", "token", "secret", "password",
	"passwd", "cookie", "session", "credential", "signature",
}

// credentialsByFirst lists credentialWords by their first byte, so that a
// name is scanned once rather than once per word: ten scans of each of a
// dozen headers on every request were most of what forwarding cost
// (perf).
var credentialsByFirst = func() (t [256][][]byte) {
	for _, w := range credentialWords {
		t[w[0]] = append(t[w[0]], []byte(w))
	}
	return t
}()

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

// forwardHeaders lists the client headers a native upstream may see, by
// the rule above. It runs on every request, so it allocates little: names
// are lowered into a stack buffer for the checks, and the kept names and
// values share one string (perf).
func forwardHeaders(h *fasthttp.RequestHeader) [][2]string {
	var hop map[string]bool
	for _, v := range h.PeekAll("Connection") {
		for name := range strings.SplitSeq(string(v), ",") {
			if name = strings.ToLower(strings.TrimSpace(name)); name != "" {
				if hop == nil {
					hop = map[string]bool{}
				}
				hop[name] = true
			}
		}
	}
	// Stack space for the usual dozen headers; append moves to the heap
	// beyond it.
	var bufSpace [1024]byte
	var spanSpace [16][3]int
	buf := bufSpace[:0]
	spans := spanSpace[:0] // name start, name end = value start, value end; in buf
	var lower [64]byte
	for k, v := range h.All() {
		if forwardable(k, v, hop, lower[:0]) {
			start := len(buf)
			buf = append(buf, k...)
			mid := len(buf)
			buf = append(buf, v...)
			spans = append(spans, [3]int{start, mid, len(buf)})
		}
	}
	if len(spans) == 0 {
		return nil
	}
	all := string(buf)
	out := make([][2]string, len(spans))
	for i, sp := range spans {
		out[i] = [2]string{all[sp[0]:sp[1]], all[sp[1]:sp[2]]}
	}
	return out
}

// forwardable applies the rule to one header; lower is scratch space for
// the lowered name.
func forwardable(name, value []byte, hop map[string]bool, lower []byte) bool {
	if !validHeaderName(name) || !validHeaderValue(value) {
		return false
	}
	for _, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower = append(lower, c)
	}
	if dropRequestHeaders[string(lower)] || hop[string(lower)] { // no copy: map index by string(bytes)
		return false
	}
	return !namesCredential(lower)
}

// namesCredential reports whether a lowered header name holds one of
// credentialWords.
func namesCredential(lower []byte) bool {
	for i, c := range lower {
		for _, w := range credentialsByFirst[c] {
			if bytes.HasPrefix(lower[i:], w) {
				return true
			}
		}
	}
	return false
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName[T string | []byte](name T) bool {
	if len(name) == 0 {
		return false
	}
	for i := range len(name) {
		if !tokenBytes[name[i]] {
			return false
		}
	}
	return true
}

// validHeaderValue rejects control characters other than horizontal tab.
func validHeaderValue(v []byte) bool {
	for _, c := range v {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// keepResponseHeaders are the upstream response headers a client may see.
// Everything else (hop-by-hop, cookies, the channel key's rate-limit
// counters, provider organisation ids) stays behind.
// Content-Type comes first (copyResponseHeaders).
var keepResponseHeaders = [...]string{"Content-Type", "Request-Id", "X-Request-Id"}
