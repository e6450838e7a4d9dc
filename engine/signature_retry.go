package engine

import (
	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert"
	"github.com/ccload/ccload/protocol/signature"
)

// Reasoning signatures across upstreams (docs/reasoning.md). A signature
// is valid only at the upstream that minted it. Those ccload hands a client
// carry their origin (package signature), so the next turn sends each
// upstream only its own; what remains is an upstream that still refuses one
// it was sent: an untagged signature of the client's family sent to another
// channel of that family (another account or provider), or a tag this
// build cannot tell. Such a 400 is not the client's fault, so the same
// route is tried once more without any signature.

// originOf is the upstream an answer comes from, for the tags of the
// signatures the client is handed.
func originOf(c *attempt) signature.Origin {
	return signature.NewOrigin(c.family, c.route.Channel.Name)
}

// nativeSignatures prepares the signatures of a client's own-family body
// for the channel it goes to (signature.Native): a body that carries no
// tag, on a request not being retried, is returned untouched.
func nativeSignatures(up protocol.Family, body []byte, model string, opt convert.RequestOptions) ([]byte, error) {
	out, _, err := signature.Native(up, body, opt.Origin, opt.DropSignatures, model)
	return out, err
}

// retryWithoutSignatures reports whether an attempt the upstream refused
// with a 400 naming a reasoning signature is to be made once more, on the
// same route, with every signature left out (attemptAs makes it). It is
// false when the refusal is not that, or the request was already sent
// without signatures: the error then goes to the client as before.
func (a *attempt) retryWithoutSignatures(s *sent) bool {
	r := a.r
	if r.dropSignatures || s.status != fasthttp.StatusBadRequest || r.ep.pass != nil ||
		!signature.Refused(s.body) || !signature.Carries(r.ep.family, r.body) {
		return false
	}
	r.dropSignatures = true
	o := s.outcome
	o.Message += " (a reasoning signature refused: retried without signatures)"
	a.at.end(a.e.clock.Now(), s.status, o)
	return true
}
