package engine

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/jsonwalk"
)

// Protocol detection for URLs that declare no `protocols`.
//
// A request for such a URL speaks the client's family first. When the
// upstream answers that this endpoint does not exist here (pathMiss), the
// same attempt tries the other families in detectOrder, converting the
// request, until one answers with anything else. A miss cools nothing and
// does not spend routing.max_attempts; it is logged as an attempt with no
// scope. The first family that answers 2xx is remembered for the URL and
// the client family until the config snapshot changes; a URL where every
// family missed is not sent that client family again for detectRetry, then
// probed afresh. One request probes a URL+family at a time; the others wait
// for its verdict (the status line, not the whole answer).
//
// Not probed: URLs that declare protocols, exact URLs (the path is fixed,
// so a 404 says nothing about the family) and the natively relayed OpenAI
// endpoints (passthrough.go), which have no conversion to try.
// Engine.try decides which attempts probe.

// detectOrder is the order in which families are tried after the client's
// own: Chat Completions first because most relays and local servers speak
// it, then Anthropic, Responses and Gemini.
var detectOrder = []protocol.Family{protocol.OpenAI, protocol.Anthropic, protocol.Responses, protocol.Gemini}

// detectRetry is how long a URL on which every family missed is left alone
// before it is probed again.
const detectRetry = 10 * time.Minute

// detectFamilies is the probing order for a client family.
func detectFamilies(client protocol.Family) []protocol.Family {
	out := []protocol.Family{client}
	for _, f := range detectOrder {
		if f != client {
			out = append(out, f)
		}
	}
	return out
}

// pathMiss reports whether an upstream error says "no such endpoint at this
// path" rather than "no such model" (which is a model failure, design §6):
//
//	| status | body                                                        | verdict   |
//	|--------|-------------------------------------------------------------|-----------|
//	| 405    | any                                                         | path miss |
//	| 404    | not JSON: empty, HTML, plain text ("404 page not found")    | path miss |
//	| 404    | JSON that, with the request's own path cut out, mentions    | model 404 |
//	|        |   "model" or the upstream model's name                      |           |
//	| 404    | any other JSON ({"detail":"Not Found"}, "Invalid URL ...")  | path miss |
//	| other  | any                                                         | not a miss|
//
// The path is cut out because an unknown-endpoint message often echoes it,
// and a Gemini path carries "models/<name>".
func pathMiss(status int, body []byte, model, path string) bool {
	switch status {
	case fasthttp.StatusMethodNotAllowed:
		return true
	case fasthttp.StatusNotFound:
	default:
		return false
	}
	if !jsonwalk.Valid(jsonwalk.View(body)) {
		return true
	}
	text := strings.ToLower(string(body))
	if path != "" {
		text = strings.ReplaceAll(text, strings.ToLower(path), "")
	}
	if strings.Contains(text, "model") {
		return false
	}
	return model == "" || !strings.Contains(text, strings.ToLower(model))
}

// detectKey names what a detection result is about.
type detectKey struct {
	channel, url string
	client       protocol.Family
}

// detectEntry is what is known of a URL for one client family: the family
// it speaks, or when every family missed.
type detectEntry struct {
	family   protocol.Family
	failedAt time.Time
}

// detectFlight is one probe in progress; done closes when its verdict is
// known (or the probe ended without one).
type detectFlight struct {
	done chan struct{}
	once sync.Once
}

func (f *detectFlight) land() { f.once.Do(func() { close(f.done) }) }

// detector holds the detection results of one config snapshot, so a reload
// that changes the file starts afresh.
type detector struct {
	mu      sync.Mutex
	known   map[detectKey]detectEntry
	flights map[detectKey]*detectFlight
}

func newDetector() *detector {
	return &detector{known: map[detectKey]detectEntry{}, flights: map[detectKey]*detectFlight{}}
}

// claim returns what is known of k. When nothing is (or an all-miss verdict
// is older than detectRetry) it returns the flight to wait for, or, when no
// probe runs, a new flight that the caller leads (lead) and must land.
func (d *detector) claim(k detectKey, now time.Time) (ent detectEntry, fl *detectFlight, lead bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ent, ok := d.known[k]
	if ok && (ent.family != "" || now.Sub(ent.failedAt) < detectRetry) {
		return ent, nil, false
	}
	if fl := d.flights[k]; fl != nil {
		return detectEntry{}, fl, false
	}
	fl = &detectFlight{done: make(chan struct{})}
	d.flights[k] = fl
	return detectEntry{}, fl, true
}

// settle records the verdict of the flight fl (ent zero: none) and lets
// its waiters go.
func (d *detector) settle(k detectKey, fl *detectFlight, ent detectEntry) {
	d.mu.Lock()
	if ent != (detectEntry{}) {
		d.known[k] = ent
	} else if cur, ok := d.known[k]; ok && cur.family == "" {
		delete(d.known, k) // an expired all-miss verdict the probe did not renew
	}
	if d.flights[k] == fl {
		delete(d.flights, k)
	}
	d.mu.Unlock()
	fl.land()
}

// probeRun is the detection an attempt is doing; attemptAs reports to it.
type probeRun struct {
	d       *detector
	k       detectKey
	fl      *detectFlight
	settled bool // the verdict is in (settle ran)
}

// detectAttempt is attempt for a URL that declares no protocols: it uses
// the family known for the URL, or probes for it, or waits for the request
// that probes.
func (e *Engine) detectAttempt(ctx *fasthttp.RequestCtx, r *request, rt config.Route, ki, ui int) attemptResult {
	ch := rt.Channel
	d := e.view(r.snap).detect
	k := detectKey{channel: ch.Name, url: ch.URLs[ui].URL, client: r.ep.family}
	for {
		ent, fl, lead := d.claim(k, e.clock.Now())
		switch {
		case ent.family != "":
			return e.attemptAs(ctx, r, rt, ki, ui, ent.family)
		case !ent.failedAt.IsZero():
			return noFamily(ent.failedAt)
		case lead:
			return e.probeFamilies(ctx, r, rt, ki, ui, &probeRun{d: d, k: k, fl: fl})
		}
		<-fl.done // the leader settles on every path (probeFamilies' defer)
	}
}

// probeFamilies tries the families in order until one is not a path miss.
// Only a 2xx answer teaches the family (probeFound); any other failure is
// the attempt's result as usual, and the next request probes again.
func (e *Engine) probeFamilies(ctx *fasthttp.RequestCtx, r *request, rt config.Route, ki, ui int, p *probeRun) attemptResult {
	r.probe = p
	defer func() {
		r.probe = nil
		if !p.settled {
			p.d.settle(p.k, p.fl, detectEntry{})
		}
	}()
	for _, up := range detectFamilies(r.ep.family) {
		res := e.attemptAs(ctx, r, rt, ki, ui, up)
		if !res.miss {
			return res
		}
		r.attempts-- // a detection miss does not spend routing.max_attempts
	}
	now := e.clock.Now()
	p.settled = true
	p.d.settle(p.k, p.fl, detectEntry{failedAt: now})
	return noFamily(now)
}

// noFamily is the result of an attempt on a URL where every family missed:
// the next URL is tried, and nothing cools.
func noFamily(at time.Time) attemptResult {
	return attemptResult{miss: true, status: fasthttp.StatusBadGateway, outcome: failure.Outcome{
		Kind: failure.KindNotFound, Scope: failure.ScopeURL, Retry: true,
		Message: fmt.Sprintf("protocol detection: the URL has no endpoint of any family (probed %s, probed again after %s)",
			at.UTC().Format(time.RFC3339), detectRetry),
	}}
}

// probeFound is called by attempt.run when up answered 2xx on an attempt
// that probes: the URL speaks it. Waiting requests go on at once, before
// this one reads the body.
func (r *request) probeFound(up protocol.Family) {
	if p := r.probe; !p.settled {
		p.settled = true
		p.d.settle(p.k, p.fl, detectEntry{family: up})
	}
}

// probeMissed is called by attempt.unanswered with the failed send of an
// attempt that probes: when the failure is a path miss, it turns the
// outcome into a miss that cools nothing and reports true.
func (r *request) probeMissed(up protocol.Family, s *sent, upstreamURL, model string) bool {
	path := ""
	if u, err := url.Parse(upstreamURL); err == nil {
		path = u.Path
	}
	if !pathMiss(s.status, s.body, model, path) {
		return false
	}
	s.outcome = failure.Outcome{Kind: failure.KindNotFound, Message: fmt.Sprintf(
		"protocol detection: no %s endpoint here (HTTP %d), trying the next family", up, s.status)}
	return true
}

// Detection is one detection result for the admin API: what a URL was
// found to speak for a client family, or that it speaks none (Protocol
// empty) until RetryAt.
type Detection struct {
	Client   protocol.Family `json:"client"`
	Protocol protocol.Family `json:"protocol,omitempty"`
	RetryAt  time.Time       `json:"retry_at,omitzero"`
}

// Detected lists what detection learned about one URL of a channel under
// the config in force, by client family.
func (e *Engine) Detected(channel, rawURL string) []Detection {
	if e.cfg == nil {
		return nil
	}
	d := e.view(e.cfg.Current()).detect
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Detection
	for _, c := range detectOrder {
		ent, ok := d.known[detectKey{channel: channel, url: rawURL, client: c}]
		if !ok {
			continue
		}
		det := Detection{Client: c, Protocol: ent.family}
		if ent.family == "" {
			det.RetryAt = ent.failedAt.Add(detectRetry)
		}
		out = append(out, det)
	}
	return out
}

// detectedFamily is a family detection found a URL to speak, for any
// client family, or "" when none is known.
func (e *Engine) detectedFamily(channel, rawURL string) protocol.Family {
	for _, d := range e.Detected(channel, rawURL) {
		if d.Protocol != "" {
			return d.Protocol
		}
	}
	return ""
}
