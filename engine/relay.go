package engine

import (
	"strings"

	"github.com/tidwall/sjson"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert"
	"github.com/ccload/ccload/protocol/jsonwalk"
	"github.com/ccload/ccload/protocol/passthrough"
)

// relay is how an attempt's answer becomes the client's. It is chosen
// once per attempt (chooseRelay): passed through when the upstream speaks
// the client's family (design §7: native traffic is never converted),
// converted otherwise. Whole answers, streams and error bodies all ask
// it, so nothing else compares the two families.
type relay interface {
	// request is the body sent up for the upstream model, and notes on
	// what a conversion dropped or approximated (convert.RequestWith).
	request(model string, opt convert.RequestOptions) (body []byte, notes []string, err error)
	// whole is the client's body for a whole 2xx upstream answer, the
	// usage it reports, and the Content-Type to set ("" keeps the
	// upstream's).
	whole(b []byte) (out []byte, u convert.Usage, contentType string, err error)
	// raw reports whether an answer of this Content-Type goes to the
	// client byte for byte, unparsed (speech audio, a relayed endpoint's
	// SSE).
	raw(contentType string) bool
	// content reports whether an upstream stream event carries output,
	// which ends the peek at a stream (stream.go).
	content(ev *protocol.Event) bool
	// open prepares to relay a committed stream; it runs before the
	// request's body is dropped. event relays one upstream event through
	// emit, end closes a stream that ended cleanly, usage is what the
	// stream reported so far.
	open()
	event(ev *protocol.Event, emit func([]byte)) error
	end(emit func([]byte)) error
	usage() convert.Usage
	// refusal is an upstream client-fault error body in the client's
	// shape.
	refusal(status int, body []byte) []byte
}

// chooseRelay picks the attempt's relay from the two families.
func chooseRelay(a *attempt) relay {
	r := a.r
	if a.family == r.ep.family {
		return &passRelay{r: r, family: a.family, endpoint: r.ep.pass != nil,
			hideUsage: a.family == protocol.OpenAI && !r.wantsChatUsage()}
	}
	return &convertRelay{a: a}
}

// passRelay relays an upstream of the client's own family: bytes go out as
// they came, read only for usage.
type passRelay struct {
	r      *request
	family protocol.Family
	// endpoint: a relayed OpenAI endpoint (passthrough.go), whose answers
	// have their own usage and content shapes.
	endpoint bool
	// hideUsage drops the usage chunk we asked an OpenAI Chat upstream for
	// when the client did not (passRelay.request).
	hideUsage bool
	track     *convert.UsageTracker // while a stream is relayed
}

// request is the client's own bytes with only the model renamed (and a
// Chat stream's usage asked for); reasoning signatures are prepared for
// the channel (signature_retry.go).
func (p *passRelay) request(model string, opt convert.RequestOptions) ([]byte, []string, error) {
	r, body := p.r, p.r.body
	if p.family == protocol.OpenAI && r.stream && !r.wantsChatUsage() {
		// Chat streams report usage only when asked; ask, and event hides
		// the extra usage chunk from this client, which did not (CLIENTS.md).
		var err error
		if body, err = sjson.SetBytes(body, "stream_options.include_usage", true); err != nil {
			return nil, nil, err
		}
	}
	var err error
	switch {
	case p.endpoint:
		body, err = r.passBody(body, model)
		return body, nil, err
	case p.family != protocol.Gemini && model != r.model: // Gemini's model is in the path
		if body, err = sjson.SetBytes(body, "model", model); err != nil {
			return nil, nil, err
		}
	}
	body, err = nativeSignatures(p.family, body, model, opt)
	return body, nil, err
}

func (p *passRelay) whole(b []byte) ([]byte, convert.Usage, string, error) {
	if p.endpoint {
		return b, passthrough.Usage(b), "", nil
	}
	return b, convert.UsageOf(p.family, b), "application/json", nil
}

func (p *passRelay) raw(contentType string) bool {
	return p.endpoint && !strings.Contains(strings.ToLower(contentType), "json")
}

// content: a completions chunk carries choices[].text where chat has a
// delta.
func (p *passRelay) content(ev *protocol.Event) bool {
	if !p.endpoint {
		return isContent(p.family, ev)
	}
	if ev.IsDone() {
		return true
	}
	d := jsonwalk.View(ev.Data) // not gjson: see isContent
	ch := jsonwalk.First(jsonwalk.Member(d, "choices"))
	if ch == "" {
		return jsonwalk.Member(d, "usage") != ""
	}
	return jsonwalk.Set(jsonwalk.Member(ch, "text")) || jsonwalk.Set(jsonwalk.Member(ch, "finish_reason"))
}

func (p *passRelay) open() { p.track = convert.NewUsageTracker(p.family) }

func (p *passRelay) event(ev *protocol.Event, emit func([]byte)) error {
	p.track.Observe(ev)
	if p.hideUsage && isChatUsageChunk(ev) {
		return nil // we asked for it; the client did not
	}
	emit(ev.Raw)
	return nil
}

func (p *passRelay) end(func([]byte)) error { return nil }

func (p *passRelay) usage() convert.Usage { return p.track.Usage() }

func (p *passRelay) refusal(_ int, body []byte) []byte { return body }

// convertRelay converts an upstream of another family into the client's
// (protocol/convert).
type convertRelay struct {
	a    *attempt
	conv convert.Stream // while a stream is relayed
}

func (c *convertRelay) request(model string, opt convert.RequestOptions) ([]byte, []string, error) {
	r := c.a.r
	return convert.RequestWith(r.ep.family, c.a.family, r.body, model, r.stream, opt)
}

func (c *convertRelay) whole(b []byte) ([]byte, convert.Usage, string, error) {
	r := c.a.r
	out, err := convert.ResponseWith(c.a.family, r.ep.family, b, r.model, convert.ResponseOptions{Request: r.body, Origin: originOf(c.a)})
	return out, convert.UsageOf(c.a.family, b), "application/json", err
}

func (c *convertRelay) raw(string) bool { return false }

func (c *convertRelay) content(ev *protocol.Event) bool { return isContent(c.a.family, ev) }

func (c *convertRelay) open() {
	r := c.a.r
	c.conv = convert.NewStreamWith(c.a.family, r.ep.family, r.model, convert.StreamOptions{
		OmitChatUsage: r.ep.family == protocol.OpenAI && !r.wantsChatUsage(),
		Request:       r.body,
		Origin:        originOf(c.a),
	})
}

func (c *convertRelay) event(ev *protocol.Event, emit func([]byte)) error {
	return c.conv.Event(ev, emit)
}

func (c *convertRelay) end(emit func([]byte)) error { return c.conv.Close(emit) }

func (c *convertRelay) usage() convert.Usage { return c.conv.Usage() }

func (c *convertRelay) refusal(status int, body []byte) []byte {
	return convert.ConvertError(c.a.family, c.a.r.ep.family, status, body)
}
