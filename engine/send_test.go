package engine

import (
	"net/http"
	"testing"

	"github.com/ccload/ccload/engine/upstream"
	"github.com/valyala/fasthttp"
)

// TestForwardHeadersRule: the header forwarding rule of send.go, one row per clause.
// fasthttp 1.78 already refuses invalid names on the wire (the security
// suite checks that); this holds the rule for headers that get past it.
func TestForwardHeadersRule(t *testing.T) {
	var h fasthttp.RequestHeader
	h.DisableNormalizing()
	set := map[string]string{
		"anthropic-beta": "keep", "User-Agent": "keep", "x-mock-scenario": "keep",
		"Authorization": "Bearer t", "x-api-key": "t", "Proxy-Authorization": "Basic x",
		"Anthropic-Api-Key": "c", "X-Upstream-Key": "c", "X-Auth-Token": "c", "Session-Id": "c",
		"X-Request-Signature": "c", "X-Db-Passwd": "c", "X-Credentials": "c", "X-Secret": "c", "X-Cookie-Jar": "c",
		"X-Stainless-Lang": "keep", "Accept": "keep",
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

// TestCopyResponseHeadersKeepsOnlyTheListed: a client sees the upstream's
// Content-Type and request ids, whatever their case and from either
// upstream client, and nothing else (cookies, rate-limit counters of the
// channel key, organisation ids).
func TestCopyResponseHeadersKeepsOnlyTheListed(t *testing.T) {
	sent := [][2]string{
		{"content-type", "application/json"}, {"request-id", "req_1"}, {"x-request-id", "xr_1"},
		{"Request-Id", "second"}, {"set-cookie", "s=1"}, {"anthropic-ratelimit-requests-remaining", "5"},
		{"openai-organization", "org"}, {"X-Empty", ""},
	}
	raw := "HTTP/1.1 200 OK\r\n"
	hh := http.Header{}
	for _, kv := range sent {
		raw += kv[0] + ": " + kv[1] + "\r\n"
		hh.Add(kv[0], kv[1])
	}
	h1, status, err := upstream.ParseHead([]byte(raw + "\r\n"))
	if err != nil || status != 200 {
		t.Fatalf("ParseHead: %d %v", status, err)
	}
	want := map[string]string{"Content-Type": "application/json", "Request-Id": "req_1", "X-Request-Id": "xr_1"}
	for name, h := range map[string]interface{ Get(string) string }{"h1": h1, "net/http": hh} {
		var ctx fasthttp.RequestCtx
		copyResponseHeaders(&ctx, h, "")
		got := map[string]string{}
		for k, v := range ctx.Response.Header.All() {
			if string(k) != "Content-Length" && string(k) != "Server" && string(k) != "Date" {
				got[string(k)] = string(v)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: client sees %v, want %v", name, got, want)
			continue
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q (all: %v)", name, k, got[k], v, got)
			}
		}
	}
}

// TestCopyResponseHeadersReplacesTheType: an answer ccload converted or
// streams keeps the upstream's request ids but carries its own type.
func TestCopyResponseHeadersReplacesTheType(t *testing.T) {
	h1, _, err := upstream.ParseHead([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nRequest-Id: r\r\n\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	hh := http.Header{"Content-Type": {"text/plain"}, "Request-Id": {"r"}}
	for name, h := range map[string]interface{ Get(string) string }{"h1": h1, "net/http": hh} {
		var ctx fasthttp.RequestCtx
		copyResponseHeaders(&ctx, h, "application/json")
		if ct, id := string(ctx.Response.Header.ContentType()), string(ctx.Response.Header.Peek("Request-Id")); ct != "application/json" || id != "r" {
			t.Errorf("%s: Content-Type %q, Request-Id %q", name, ct, id)
		}
	}
}
