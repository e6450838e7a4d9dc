package engine

import "strings"

// dropRequestHeaders are never forwarded upstream: the client's credentials
// (design §4: a client token never leaves ccload), hop-by-hop headers
// (RFC 9110 §7.6.1), and headers the upstream client sets itself. Accept-
// Encoding is dropped so Go's transport negotiates and decompresses gzip;
// forwarding the client's value would hand us compressed SSE we must parse.
var dropRequestHeaders = map[string]bool{
	"authorization": true, "x-api-key": true, "x-goog-api-key": true, "api-key": true,
	"cookie": true, "proxy-authorization": true,
	"connection": true, "keep-alive": true, "proxy-connection": true, "te": true,
	"trailer": true, "transfer-encoding": true, "upgrade": true,
	"host": true, "content-length": true, "accept-encoding": true,
	"x-forwarded-for": true, "x-real-ip": true, "forwarded": true,
}

func forwardable(name string) bool {
	return !dropRequestHeaders[strings.ToLower(name)]
}

// keepResponseHeaders are the upstream response headers a client may see.
// Everything else (hop-by-hop, cookies, the channel key's rate-limit
// counters, provider organisation ids) stays behind.
var keepResponseHeaders = []string{"Content-Type", "Request-Id", "X-Request-Id"}
