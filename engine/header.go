package engine

import (
	"strings"

	"github.com/valyala/fasthttp"
)

// Header forwarding rule (README "Security"; issue 16). A client header
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
// parse.
var dropRequestHeaders = map[string]bool{
	"authorization": true, "x-api-key": true, "x-goog-api-key": true, "api-key": true,
	"cookie": true, "proxy-authorization": true,
	"connection": true, "keep-alive": true, "proxy-connection": true, "te": true,
	"trailer": true, "transfer-encoding": true, "upgrade": true,
	"host": true, "content-length": true, "accept-encoding": true,
	"x-forwarded-for": true, "x-real-ip": true, "forwarded": true,
	"x-forwarded-proto": true, "x-forwarded-host": true,
}

// credentialWords mark a header name as a credential wherever they appear
// in it.
var credentialWords = []string{"auth", "key", "token", "secret", "password", "passwd", "cookie", "session", "credential", "signature"}

// forwardHeaders lists the client headers a native upstream may see, by
// the rule above.
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
	var out [][2]string
	h.VisitAll(func(k, v []byte) {
		if forwardable(string(k), v, hop) {
			out = append(out, [2]string{string(k), string(v)})
		}
	})
	return out
}

func forwardable(name string, value []byte, hop map[string]bool) bool {
	lower := strings.ToLower(name)
	if dropRequestHeaders[lower] || hop[lower] || !validHeaderName(name) || !validHeaderValue(value) {
		return false
	}
	for _, w := range credentialWords {
		if strings.Contains(lower, w) {
			return false
		}
	}
	return true
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
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
var keepResponseHeaders = []string{"Content-Type", "Request-Id", "X-Request-Id"}
