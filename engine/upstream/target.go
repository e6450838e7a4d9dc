package upstream

import "strings"

// h1Target is where a request for a URL goes.
type h1Target struct {
	addr string // host:port to dial
	host string // the Host header
	uri  string // the request target: path and query
}

// parseH1Target splits a plain http:// URL. It reports false for a URL
// this client does not send (credentials in it, bytes that do not belong
// in a request line), which then goes through net/http.
func parseH1Target(raw string) (h1Target, bool) {
	rest, ok := strings.CutPrefix(raw, "http://")
	if !ok {
		return h1Target{}, false
	}
	host, uri := rest, "/"
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host, uri = rest[:i], rest[i:]
	}
	if i := strings.IndexByte(uri, '#'); i >= 0 {
		uri = uri[:i]
	}
	if uri == "" || uri[0] == '?' {
		uri = "/" + uri
	}
	if host == "" || strings.IndexByte(host, '@') >= 0 {
		return h1Target{}, false
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c == 0x7f {
			return h1Target{}, false
		}
	}
	addr := host
	switch {
	case strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]"):
		addr = host + ":80"
	case strings.IndexByte(host, ':') < 0:
		addr = host + ":80"
	}
	return h1Target{addr: addr, host: host, uri: uri}, true
}
