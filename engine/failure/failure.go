package failure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// Scope is the narrowest component a failure is blamed on: the one to cool.
type Scope string

// Scopes, narrowest first. ScopeChannel is never returned by Classify: the
// engine promotes a key or model scope to the channel (design §6).
const (
	ScopeNone    Scope = ""
	ScopeKey     Scope = "key"
	ScopeModel   Scope = "model"
	ScopeURL     Scope = "url"
	ScopeChannel Scope = "channel"
)

// Kind is what went wrong. It picks the initial cooldown length.
type Kind string

// Kinds. KindOK ("") is a success.
const (
	KindOK        Kind = ""
	KindAuth      Kind = "auth"       // key invalid, expired, unpaid, forbidden
	KindRateLimit Kind = "rate_limit" // 429, quota, and 200 bodies that say so
	KindServer    Kind = "server"     // 5xx, 529, overloaded
	KindTimeout   Kind = "timeout"    // first-byte / non-stream timer, dial timeout, 408
	KindNetwork   Kind = "network"    // refused, reset, DNS, TLS, EOF before headers
	KindNotFound  Kind = "not_found"  // model missing or retired
	KindClient    Kind = "client"     // the client's request is at fault
	KindCanceled  Kind = "canceled"   // the client went away
)

// MaxHint caps Outcome.RetryAfter, so that a garbled reset header cannot
// park a key for years. A week covers daily and weekly quotas.
const MaxHint = 7 * 24 * time.Hour

// Input is everything known about one attempt's outcome. The engine fills it;
// Classify does not keep it.
type Input struct {
	Status   int                 // 0 when there was no HTTP response
	Header   func(string) string // response header lookup (case-insensitive); may be nil
	Body     []byte              // first bytes of the body, or the first SSE events not yet forwarded
	Err      error               // transport error (nil if a response arrived and was read)
	Timeout  bool                // first-byte or non-stream timeout fired
	Canceled bool                // the client went away: not an upstream failure
	Now      time.Time           // the engine's clock, for reset times given as dates; zero ignores those
}

// Outcome is the verdict on one attempt. The zero value is a success.
type Outcome struct {
	Kind        Kind
	Scope       Scope
	RetryAfter  time.Duration // upstream reset hint, 0 = none
	ClientFault bool          // return to the client at once: no retry, no cooldown
	Retry       bool          // another candidate may be tried
	Message     string        // short upstream error text for logs, credentials redacted
}

// OK reports whether the attempt succeeded.
func (o Outcome) OK() bool { return o.Kind == KindOK }

// Classify maps one attempt to an Outcome following the table in the package
// documentation. It never panics and does no I/O.
func Classify(in Input) Outcome {
	switch {
	case in.Canceled:
		return Outcome{Kind: KindCanceled, Message: "client went away"}
	case in.Timeout:
		msg := "timeout waiting for the upstream"
		if in.Err != nil {
			msg += ": " + in.Err.Error()
		}
		return Outcome{Kind: KindTimeout, Scope: ScopeURL, Retry: true, Message: cleanMessage(msg)}
	case in.Status == 0:
		return transport(in.Err)
	}

	var (
		o  Outcome
		ue upstreamErr
	)
	if in.Status >= 200 && in.Status < 300 {
		var soft bool
		ue, soft = findSoftError(in.Body)
		switch {
		case soft:
			o = softVerdict(ue)
		case in.Err != nil:
			return transport(in.Err) // the body broke off before we saw all we needed
		default:
			return Outcome{}
		}
	} else {
		ue = inspect(in.Body)
		o = byStatus(in.Status, ue)
	}

	o.Message = ue.describe(in.Status)
	if o.Retry {
		o.RetryAfter = resetHint(o.Kind, in.Header, in.Now, ue)
	}
	return o
}

// SoftError reports whether a body that arrived with HTTP 200 is really an
// error (see "Soft errors" in the package documentation), and classifies it.
// Body-borne reset hints (Gemini RetryInfo, "try again in") are included;
// header hints are Classify's job.
func SoftError(body []byte) (Outcome, bool) {
	ue, ok := findSoftError(body)
	if !ok {
		return Outcome{}, false
	}
	o := softVerdict(ue)
	o.Message = ue.describe(http.StatusOK)
	if o.Retry {
		o.RetryAfter = resetHint(o.Kind, nil, time.Time{}, ue)
	}
	return o, true
}

// softVerdict classifies an error found in a 2xx body: a plain-text rule's
// verdict, else the status the embedded error stands for.
func softVerdict(ue upstreamErr) Outcome {
	if ue.plain.Kind != KindOK {
		return ue.plain
	}
	return byStatus(ue.impliedStatus(), ue)
}

// byStatus applies the status rows of the table. ue carries the upstream's
// own words, which refine the scope.
func byStatus(status int, ue upstreamErr) Outcome {
	fail := func(k Kind, s Scope) Outcome { return Outcome{Kind: k, Scope: s, Retry: true} }
	client := Outcome{Kind: KindClient, ClientFault: true}
	text := ue.text
	if echoes(status) {
		// A 4xx answers the request, and its message may quote it (Gemini:
		// Unknown name "API_KEY_INVALID"; OpenAI: Unrecognized request
		// argument supplied: invalid_api_key). Only what the provider
		// wrote itself counts: the structured fields, and a message that
		// opens with one of its own sentences.
		text = ue.codes
		switch {
		case leads(ue.message, regionLeads):
			return fail(KindAuth, ScopeURL)
		case leads(ue.message, keyLeads):
			return fail(KindAuth, ScopeKey)
		case modelGoneRe.MatchString(strings.TrimSpace(ue.message)):
			return fail(KindNotFound, ScopeModel)
		}
	}
	switch {
	case containsAny(text, regionTexts):
		// The upstream refuses where the request comes from: another URL
		// (proxy, region) may work, another key will not.
		return fail(KindAuth, ScopeURL)
	case containsAny(text, keyTexts):
		// design §6: invalid/expired key text is the key's fault whatever
		// the status (Gemini says API_KEY_INVALID with a 400).
		return fail(KindAuth, ScopeKey)
	}

	switch {
	case status == 401 || status == 402 || status == 403:
		return fail(KindAuth, ScopeKey)
	case status == 429:
		if containsAny(text, overloadTexts) {
			// The model, not this key, is out of capacity: the next key of
			// the same channel would get the same answer.
			return fail(KindRateLimit, ScopeModel)
		}
		return fail(KindRateLimit, ScopeKey)
	case status == 404 || status == 410:
		return fail(KindNotFound, ScopeModel)
	case status == 408:
		return fail(KindTimeout, ScopeURL)
	case status >= 400 && status < 500:
		if (status == 400 || status == 413 || status == 422) && modelMissing(text) {
			return fail(KindNotFound, ScopeModel)
		}
		return client
	case status >= 500 && status < 600:
		if modelMissing(text) {
			return fail(KindNotFound, ScopeModel)
		}
		return fail(KindServer, ScopeModel)
	}
	return fail(KindServer, ScopeURL)
}

// echoes reports whether an answer with this status may quote the
// client's request in its message: every 4xx but 429, whose message is
// about load and only picks between the key and the model, both of which
// a 429 cools anyway.
func echoes(status int) bool { return status >= 400 && status < 500 && status != 429 }

// describe is the Message for an upstream error: its own words, else its
// codes, else the status line.
func (u upstreamErr) describe(status int) string {
	msg := u.message
	if msg == "" {
		msg = strings.TrimSpace(strings.Join([]string{u.typ, u.code, u.status}, " "))
	}
	if msg == "" {
		msg = fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	}
	return cleanMessage(msg)
}

// transport classifies an attempt that got no HTTP response.
func transport(err error) Outcome {
	switch {
	case err == nil:
		return Outcome{Kind: KindNetwork, Scope: ScopeURL, Retry: true, Message: "no response from the upstream"}
	case errors.Is(err, context.Canceled):
		// The attempt's context was canceled, which the engine does when
		// the client leaves: not the upstream's fault.
		return Outcome{Kind: KindCanceled, Message: cleanMessage(err.Error())}
	case isTimeout(err):
		return Outcome{Kind: KindTimeout, Scope: ScopeURL, Retry: true, Message: cleanMessage(err.Error())}
	}
	return Outcome{Kind: KindNetwork, Scope: ScopeURL, Retry: true, Message: cleanMessage(err.Error())}
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		return true
	}
	// fasthttp's ErrDialTimeout and ErrTLSHandshakeTimeout are plain errors.
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "timed out") || strings.Contains(s, "timeout")
}
