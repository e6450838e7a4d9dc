package engine

import (
	"bytes"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/engine/failure"
)

// `credentials: client` (design §9): an Anthropic channel that forwards the
// client's own Anthropic credential, a Claude Code subscription sign-in
// (Authorization: Bearer sk-ant-oat…) or an API key, while the client
// authenticates to ccload with its ccload token in x-ccload-token. This is
// the one case where a client credential goes upstream, and only to the
// channel that asks for it: ccload pools no Claude subscription and
// imitates no client, as Anthropic's terms forbid third-party use of
// subscription sign-ins.

// ccloadTokenHeader carries the ccload token of a client whose standard
// credential header holds its own upstream credential.
const ccloadTokenHeader = "x-ccload-token"

// clientCredential is the client's upstream credential when it named its
// ccload token in x-ccload-token; zero otherwise.
func clientCredential(h *fasthttp.RequestHeader) [2]string {
	if len(h.Peek(ccloadTokenHeader)) == 0 {
		return [2]string{}
	}
	if v := h.Peek("Authorization"); len(v) > 0 {
		return [2]string{"Authorization", string(v)}
	}
	if v := bytes.TrimSpace(h.Peek("x-api-key")); len(v) > 0 {
		return [2]string{"x-api-key", string(v)}
	}
	return [2]string{}
}

// clientCredentialFor puts the client's credential on an attempt of a
// `credentials: client` channel in place of a key. A request without one
// cannot use the channel: it moves on to the next route, cooling nothing.
func clientCredentialFor(r *request, c *attempt) *attemptResult {
	cred := r.clientCred
	if cred[0] == "" {
		o := failure.Outcome{Kind: failure.KindAuth, Scope: failure.ScopeChannel, Retry: true,
			Message: "channel " + c.route.Channel.Name + " forwards the client's own credential; this request authenticated without one (send the ccload token in x-ccload-token and the Claude credential as usual)"}
		c.at.end(c.started, 0, o)
		return &attemptResult{outcome: o, miss: true, status: 401}
	}
	base := c.rq.Header
	c.rq.Header = func(h headerSetter) {
		base(h)
		h.Del("Authorization")
		h.Del("x-api-key")
		if strings.EqualFold(cred[0], "Authorization") {
			h.Set("Authorization", cred[1])
		} else {
			h.Set("x-api-key", cred[1])
		}
	}
	return nil
}
