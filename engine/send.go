package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/tidwall/sjson"
	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/engine/upstream"
	"github.com/ccload/ccload/protocol"
)

// The upstream request and sending it: where an attempt goes
// (upstreamURL), the headers it carries (setUpstreamHeaders, by the
// forwarding rule below), the channel's body rules (rewriteBody), the one
// send path (send) and how a failed send is classified; and the headers of
// the answer a client may see (copyResponseHeaders).

// upstreamURL is where an attempt goes: the family's endpoint, or the
// relayed endpoint's path.
func (r *request) upstreamURL(up protocol.Family, u config.URL, model string) string {
	if r.ep.pass != nil {
		return r.ep.pass.URL(u.URL, u.Exact)
	}
	return protocol.UpstreamURL(up, u.URL, u.Exact, model, r.stream)
}

// upstreamContentType is the Content-Type of the upstream body: a form's
// own (its boundary), JSON otherwise.
func (r *request) upstreamContentType() string {
	if r.ep.pass != nil && r.ep.pass.Form {
		return r.clientHeader("Content-Type")
	}
	return "application/json"
}

// setUpstreamHeaders forwards the client's headers for native traffic (so
// anthropic-beta and friends keep working), never its credential, and sets
// the channel key in the header the upstream family reads.
func (r *request) setUpstreamHeaders(h headerSetter, up protocol.Family, ch *config.Channel, ki int) {
	hasVersion := false
	if up == r.ep.family {
		for _, kv := range r.header {
			h.Add(kv[0], kv[1])
			hasVersion = hasVersion || strings.EqualFold(kv[0], "anthropic-version")
		}
	} else {
		for _, kv := range r.header {
			if strings.EqualFold(kv[0], "User-Agent") {
				h.Set("User-Agent", kv[1])
			}
		}
	}
	h.Set("Content-Type", r.upstreamContentType())
	if r.stream {
		h.Set("Accept", "text/event-stream")
	}
	name, prefix := protocol.CredentialHeader(up)
	h.Set(name, prefix+ch.Keys[ki].Reveal())
	if up == protocol.Anthropic && !hasVersion {
		h.Set("anthropic-version", protocol.AnthropicVersion)
	}
	for _, rule := range ch.Rewrite.Headers {
		switch rule.Action {
		case "remove":
			h.Del(rule.Name)
		default:
			h.Set(rule.Name, rule.Value)
		}
	}
}

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

// rewriteBody applies a channel's body rules (after conversion).
func rewriteBody(rules []config.BodyRule, body []byte) ([]byte, error) {
	var err error
	for _, rule := range rules {
		switch rule.Action {
		case "remove":
			body, err = sjson.DeleteBytes(body, rule.Path)
		default:
			body, err = sjson.SetRawBytes(body, rule.Path, rule.Value)
		}
		if err != nil {
			return nil, fmt.Errorf("rewrite rule for %q: %w", rule.Path, err)
		}
	}
	return body, nil
}

// errorPeekBytes bounds what is read of an upstream error body.
const errorPeekBytes = 64 << 10

// sent is how the first phase of an upstream call ended: a 2xx answer
// whose body the caller reads (and closes), or a classified failure.
type sent struct {
	resp    *upstreamResponse // a 2xx answer; nil on failure
	status  int               // upstream HTTP status, 0 when none arrived
	body    []byte            // the error body, up to errorPeekBytes
	outcome failure.Outcome   // why it failed, when resp is nil
}

// send is the one send path of live attempts and probes (RunProbe), so a
// probe acts exactly as a request would: the same client choice, proxy,
// headers and cancellation, and the same classification of a setup or
// transport failure or an error status. rq.Ctx ends the call; when it was
// ended by one of the attempt's timers or a deadline, the failure is a
// timeout.
func (e *Engine) send(rq *upstreamRequest) sent {
	resp, err := e.upstream.Do(&rq.Request)
	if err != nil {
		return e.sendFailed(rq, err)
	}
	if rq.onResponse != nil {
		rq.onResponse(resp)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return e.refused(resp)
	}
	return sent{resp: resp, status: resp.StatusCode}
}

// sendFailed classifies a request that got no response.
func (e *Engine) sendFailed(rq *upstreamRequest, err error) sent {
	var o failure.Outcome
	switch err {
	case upstream.ErrBadProxy:
		o = failure.Outcome{Kind: failure.KindNetwork, Scope: failure.ScopeChannel, Retry: true, Message: err.Error()}
	case upstream.ErrBadURL:
		o = failure.Outcome{Kind: failure.KindNetwork, Scope: failure.ScopeURL, Retry: true, Message: err.Error()}
	default:
		o = failure.Classify(failure.Input{Err: err, Timeout: timedOut(rq.Ctx), Now: e.clock.Now()})
	}
	return sent{outcome: o}
}

// refused reads and classifies an upstream error status.
func (e *Engine) refused(resp *upstreamResponse) sent {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, errorPeekBytes))
	resp.Body.Close()
	o := failure.Classify(failure.Input{Status: resp.StatusCode, Header: resp.Header.Get, Body: b, Now: e.clock.Now()})
	return sent{status: resp.StatusCode, body: b, outcome: o}
}

// timedOut reports whether ctx was ended by a timer (an attempt's
// first-byte or total timeout, a probe's deadline) rather than cancelled.
func timedOut(ctx context.Context) bool { return timerCause(context.Cause(ctx)) }

// timerCause reports whether an attempt's context was ended by one of its
// timers (or the request's deadline), the cause being context.Cause.
func timerCause(cause error) bool {
	switch cause {
	case errFirstByteTimeout, errTotalTimeout, errRequestDeadline, context.DeadlineExceeded:
		return true
	}
	return false
}

// keepResponseHeaders are the upstream response headers a client may see.
// Everything else (hop-by-hop, cookies, the channel key's rate-limit
// counters, provider organisation ids) stays behind.
// Content-Type comes first (copyResponseHeaders).
var keepResponseHeaders = [...]string{"Content-Type", "Request-Id", "X-Request-Id"}

// copyResponseHeaders gives the client the upstream's kept headers; a
// contentType other than "" replaces the upstream's Content-Type.
func copyResponseHeaders(ctx *fasthttp.RequestCtx, h interface{ Get(string) string }, contentType string) {
	if contentType != "" {
		ctx.SetContentType(contentType)
	}
	if hh, ok := h.(*upstream.Header); ok {
		// One walk of the upstream's few headers rather than a lookup per
		// kept name, each of which walks them for a name that is mostly
		// absent (perf). The first of repeated names wins, as
		// with Get.
		var seen [len(keepResponseHeaders)]bool
		seen[0] = contentType != "" // keepResponseHeaders[0] is Content-Type
		for _, kv := range hh.Fields() {
			for i, name := range keepResponseHeaders {
				if !seen[i] && kv[1] != "" && len(kv[0]) == len(name) && strings.EqualFold(kv[0], name) {
					seen[i] = true
					ctx.Response.Header.Set(name, kv[1])
				}
			}
		}
		return
	}
	for i, k := range keepResponseHeaders {
		if i == 0 && contentType != "" {
			continue
		}
		if v := h.Get(k); v != "" {
			ctx.Response.Header.Set(k, v)
		}
	}
}
