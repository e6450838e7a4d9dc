package securitytest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Finding: on a malformed request fasthttp logs the raw request buffer
// (client token included) to stderr and the 400 body echoes it.
func TestMalformedRequestIsNotEchoed(t *testing.T) {
	s := start(t, config("", "http://127.0.0.1:9", ""))
	for _, raw := range []string{
		"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: %s\r\nno colon in this line\r\n\r\n",
		"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: %s\r\nContent-Length: 12x\r\n\r\n",
		"POST /v1/messages?key=%s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"POST /v1/mess\x00ages?key=%s HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		c := dial(t, s.Addr)
		fmt.Fprintf(c, raw, token)
		got := waitClosed(t, c, 15*time.Second)
		if strings.Contains(got, token) || strings.Contains(got, "Host: x") {
			t.Errorf("the answer echoes the request:\n%s", got)
		}
	}
	s.Stop()
	if strings.Contains(s.Stderr.String(), token) {
		t.Errorf("stderr holds the client token:\n%s", s.Stderr)
	}
}
