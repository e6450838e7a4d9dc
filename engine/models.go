package engine

import (
	"slices"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/count"
)

// serveModels lists the models the token may use, in the caller's format:
// OpenAI's list, Anthropic's (when the request carries anthropic-version)
// or Gemini's (on /v1beta/models).
func (e *Engine) serveModels(ctx *fasthttp.RequestCtx, ep endpoint, snap *config.Snapshot, tok *config.Token) {
	var names []string
	seen := map[string]bool{}
	for _, ch := range snap.Channels {
		if !ch.Enabled || !tok.AllowsChannel(ch.Name) {
			continue
		}
		for _, m := range ch.Models {
			if !m.Disabled && !seen[m.Name] && tok.AllowsModel(m.Name) {
				seen[m.Name] = true
				names = append(names, m.Name)
			}
		}
	}
	slices.Sort(names)
	created := strconv.FormatInt(snap.LoadedAt.Unix(), 10)
	b := make([]byte, 0, 64*len(names)+64)
	switch ep.family {
	case protocol.Anthropic:
		b = append(b, `{"data":[`...)
		for i, n := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":"model","id":`...)
			b = strconv.AppendQuote(b, n)
			b = append(b, `,"display_name":`...)
			b = strconv.AppendQuote(b, n)
			b = append(b, `,"created_at":`...)
			b = strconv.AppendQuote(b, snap.LoadedAt.UTC().Format("2006-01-02T15:04:05Z"))
			b = append(b, '}')
		}
		b = append(b, `],"has_more":false`...)
		if len(names) > 0 {
			b = append(b, `,"first_id":`...)
			b = strconv.AppendQuote(b, names[0])
			b = append(b, `,"last_id":`...)
			b = strconv.AppendQuote(b, names[len(names)-1])
		}
		b = append(b, '}')
	case protocol.Gemini:
		b = append(b, `{"models":[`...)
		for i, n := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = strconv.AppendQuote(b, "models/"+n)
			b = append(b, `,"displayName":`...)
			b = strconv.AppendQuote(b, n)
			b = append(b, `,"supportedGenerationMethods":["generateContent","streamGenerateContent","countTokens"]}`...)
		}
		b = append(b, `]}`...)
	default:
		b = append(b, `{"object":"list","data":[`...)
		for i, n := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = strconv.AppendQuote(b, n)
			b = append(b, `,"object":"model","created":`...)
			b = append(b, created...)
			b = append(b, `,"owned_by":"ccload"}`...)
		}
		b = append(b, `]}`...)
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// serveCountTokens answers count_tokens locally with a real tokenizer and
// calibrated per-message overheads (protocol/count), without an upstream
// call: clients call it often and it must be fast and free.
func (e *Engine) serveCountTokens(ctx *fasthttp.RequestCtx, r *request) {
	var n int
	var err error
	b := make([]byte, 0, 48)
	if r.ep.family == protocol.Gemini {
		n, err = count.Gemini(r.model, r.body)
		b = append(b, `{"totalTokens":`...)
	} else {
		n, err = count.Anthropic(r.body)
		b = append(b, `{"input_tokens":`...)
	}
	if err != nil {
		e.reject(ctx, r, &clientError{Status: 400, Msg: err.Error()})
		return
	}
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '}')
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
	r.rec.fail(200, "", false)
}
