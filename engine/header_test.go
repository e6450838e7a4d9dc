package engine

import (
	"net/http"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestForwardHeadersRule: the README's header rule, one row per clause.
// fasthttp 1.78 already refuses invalid names on the wire (the security
// suite checks that); this holds the rule for headers that get past it.
func TestForwardHeadersRule(t *testing.T) {
	var h fasthttp.RequestHeader
	h.DisableNormalizing()
	set := map[string]string{
		"anthropic-beta": "keep", "User-Agent": "keep", "x-mock-scenario": "keep",
		"Authorization": "Bearer t", "x-api-key": "t", "Proxy-Authorization": "Basic x",
		"Anthropic-Api-Key": "c", "X-Upstream-Key": "c", "X-Auth-Token": "c", "Session-Id": "c",
		"Connection": "close, X-Hop", "X-Hop": "c", "Keep-Alive": "5",
		"Bad Header": "c", "Bad(Name": "c", "X-Ctl": "a\x01b",
	}
	for k, v := range set {
		h.Set(k, v)
	}
	got := http.Header{}
	for _, kv := range forwardHeaders(&h) {
		got.Add(kv[0], kv[1])
	}
	for k := range set {
		want := set[k] == "keep"
		if _, have := got[http.CanonicalHeaderKey(k)]; have != want {
			if _, raw := got[k]; raw != want {
				t.Errorf("%s forwarded=%v, want %v", k, raw || have, want)
			}
		}
	}
}
