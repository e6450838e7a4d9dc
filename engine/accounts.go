package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/account"
	"github.com/ccload/ccload/engine/failure"
)

// Subscription accounts (design §9). An oauth channel holds one key
// placeholder per account (config.AccountKey), so key selection, scoped
// cooldowns and failover treat an account as a key. What differs is here:
// which accounts may be tried at all (signed in, valid, quota left), the
// credential put on the request (the account's access token, refreshed
// when near its end), the Codex backend's dialect, and what an answer
// says about the account (quota windows, an expired token, a used-up
// quota). The account pool (engine/account) does the work.

// accountOrder keeps the account indexes of an oauth channel that may
// take a request now: signed in, not invalid, quota not exhausted. An
// exhausted account comes back exactly at its reset, because the pool
// compares with the reset time, not a cooldown. Only an oauth channel's
// keys are asked for (keyOrder).
func (e *Engine) accountOrder(ch *config.Channel, idx []int) []int {
	if e.accounts == nil {
		return idx
	}
	now := e.clock.Now()
	out := idx[:0]
	for _, i := range idx {
		if ok, _ := e.accounts.Usable(ch.Name, ch.Accounts[i], now); ok {
			out = append(out, i)
		}
	}
	return out
}

// accountFor fills an attempt on an oauth channel with the account's
// credential: the access token as Bearer, the Codex headers, and a
// listener for the quota headers of the answer. It returns a failure when
// the account cannot be used (signed out, invalid, refresh failed), which
// moves the request on to the next account. attempt.run calls it for an
// oauth channel only.
func (e *Engine) accountFor(r *request, c *attempt) *attemptResult {
	ch := c.route.Channel
	name := ch.Accounts[c.keyIndex]
	if e.accounts == nil {
		return accountFailure(c, "subscription accounts are not available in this process")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cred, err := e.accounts.Access(ctx, ch, name)
	if err != nil {
		return accountFailure(c, "account "+name+": "+err.Error())
	}
	r.acctToken = cred.AccessToken
	base := c.rq.Header
	session := r.clientHeader("session_id")
	if session == "" {
		session = newSessionID()
	}
	c.rq.Header = func(h headerSetter) {
		base(h)
		h.Set("Authorization", "Bearer "+cred.AccessToken)
		if ch.OAuth == config.OAuthCodex {
			h.Set("chatgpt-account-id", cred.AccountID)
			h.Set("originator", account.CodexOriginator)
			h.Set("session_id", session)
			h.Set("Accept", "text/event-stream")
		}
	}
	// The Codex backend only streams (account.CodexWhole): a client that
	// asked for one whole answer gets the stream assembled into it.
	whole := ch.OAuth == config.OAuthCodex && !r.stream
	prev := c.rq.onResponse
	c.rq.onResponse = func(resp *upstreamResponse) {
		e.accounts.Observe(ch, name, resp.Header.Get)
		if prev != nil {
			prev(resp)
		}
		if ch.OAuth != config.OAuthCodex || resp.StatusCode < 200 || resp.StatusCode > 299 {
			return
		}
		if resp.Header.Get("Content-Type") == "" {
			// The backend's 2xx answers are always streams, and it sends
			// them without a Content-Type (as gateways that relay it
			// report): read as one.
			resp.Header = eventStreamHeader{resp.Header}
		}
		if whole {
			resp.Body = account.CodexWhole(resp.Body)
		}
	}
	return nil
}

// noAccountLeft says on the request's 503 why an oauth channel had no
// account to try: each account's reason, the soonest reset among them.
func (e *Engine) noAccountLeft(ch *config.Channel, p *routePlan) {
	if e.accounts == nil {
		return
	}
	now := e.clock.Now()
	var why []string
	for _, a := range ch.Accounts {
		if ok, reason := e.accounts.Usable(ch.Name, a, now); !ok {
			why = append(why, a+" "+reason)
		}
	}
	p.note(ch.Name + ": no account can take the request (" + strings.Join(why, ", ") + ")")
}

func accountFailure(c *attempt, msg string) *attemptResult {
	o := failure.Outcome{Kind: failure.KindAuth, Scope: failure.ScopeKey, Retry: true, Message: msg}
	c.at.end(time.Now(), 0, o)
	return &attemptResult{outcome: o}
}

// accountAnswer judges a failed attempt on an oauth channel. retry: the
// provider said the access token expired, it was renewed, and the same
// account should be tried once more. handled: the failure was the
// account's quota, now recorded with its reset time, so no cooldown is
// struck (the pool skips the account until exactly the reset).
func (e *Engine) accountAnswer(r *request, rt config.Route, ki int, res *attemptResult, retried *bool) (retry, handled bool) {
	ch := rt.Channel
	if e.accounts == nil {
		return false, false
	}
	name := ch.Accounts[ki]
	if _, ok := e.accounts.Refused(ch, name, res.status, res.body); ok {
		return false, true
	}
	if res.status != 401 || *retried {
		return false, false
	}
	*retried = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := e.accounts.Expired(ctx, ch, name, account.Credential{AccessToken: r.acctToken})
	return err == nil, err != nil
}

// codexDialect rewrites the final Responses body for the Codex backend
// (a codex channel's Responses attempts).
func codexDialect(body []byte) ([]byte, []string, error) {
	out, dropped, err := account.CodexBody(body)
	var notes []string
	for _, f := range dropped {
		notes = append(notes, "codex backend: dropped "+f)
	}
	return out, notes, err
}

func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Accounts is the account pool, nil when the process has none.
func (e *Engine) Accounts() *account.Pool { return e.accounts }

// eventStreamHeader is an upstream answer's headers with the Content-Type
// of a stream, for an upstream known to stream that does not say so.
type eventStreamHeader struct {
	h interface{ Get(string) string }
}

func (e eventStreamHeader) Get(name string) string {
	if strings.EqualFold(name, "Content-Type") {
		return "text/event-stream"
	}
	return e.h.Get(name)
}
