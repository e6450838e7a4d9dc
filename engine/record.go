package engine

import (
	"strconv"
	"sync"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/cooldown"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/engine/live"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/pricing"
	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert"
	"github.com/ccload/ccload/store"
)

type cooldownKey = cooldown.Key

// record accumulates what the log row of one client request will say.
type record struct {
	mu             sync.Mutex // guards what a stream changes while /admin reads it
	id             string
	start          time.Time
	token          string
	clientProtocol string
	clientIP       string
	model          string
	stream         bool

	// red scrubs every upstream-derived string the row holds.
	red      *failure.Redactor
	attempts []*attemptLog
	winner   *attemptLog
	ttfb     time.Duration
	status   int
	errText  string
	cutShort bool
	usage    convert.Usage
	// debug is the request's debug capture, nil when nothing was captured.
	debug *debugCapture
	// upstreamDone is when the winning attempt's upstream body was read
	// to its end (or broke), for the overhead measure.
	upstreamDone time.Time
}

// attemptLog is one upstream attempt as the log row's attempts column shows
// it. The key appears only as its fingerprint.
type attemptLog struct {
	Channel       string          `json:"channel"`
	KeyFP         string          `json:"key"`
	URL           string          `json:"url"`
	Protocol      protocol.Family `json:"protocol"`
	UpstreamModel string          `json:"upstream_model"`
	Status        int             `json:"status"`
	Kind          failure.Kind    `json:"kind,omitempty"`
	Scope         failure.Scope   `json:"scope,omitempty"`
	DurationMs    int64           `json:"duration_ms"`
	Error         string          `json:"error,omitempty"`
	start         time.Time
	mu            *sync.Mutex
	red           *failure.Redactor

	// Notes say what the request conversion dropped or approximated for
	// this upstream (preferences are noted, not refused).
	Notes []string `json:"notes,omitempty"`
}

// begin logs a new attempt; urlID is the URL's registry.urlID, whose
// masked part the row shows (masking runs url.Parse and regexps: the
// registry memoizes it; this took the unmemoized one on every attempt).
func (rec *record) begin(channel, keyFP, urlID string, fam protocol.Family, model string, now time.Time) *attemptLog {
	a := &attemptLog{Channel: channel, KeyFP: keyFP, URL: URLOfID(urlID), Protocol: fam, UpstreamModel: model, start: now, mu: &rec.mu, red: rec.red}
	rec.mu.Lock()
	rec.attempts = append(rec.attempts, a)
	rec.mu.Unlock()
	return a
}

// note records the conversion notes of the attempt.
func (a *attemptLog) note(notes []string) {
	if len(notes) == 0 {
		return
	}
	a.mu.Lock()
	a.Notes = notes
	a.mu.Unlock()
}

func (a *attemptLog) end(now time.Time, status int, o failure.Outcome) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.Status = status
	a.Kind, a.Scope = o.Kind, o.Scope
	a.Error = a.red.Message(o.Message)
	a.DurationMs = now.Sub(a.start).Milliseconds()
}

// won marks the attempt that answered the client.
func (rec *record) won(c *attempt, ttfb time.Duration) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.winner = c.at
	rec.ttfb = ttfb
	rec.status = c.resp.StatusCode
}

// fail marks a request that failed after it was committed.
func (rec *record) fail(status int, msg string, cutShort bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.status = status
	rec.errText = rec.red.Message(msg)
	rec.cutShort = cutShort
}

// setUsage records the tokens seen so far.
func (rec *record) setUsage(u convert.Usage) {
	rec.mu.Lock()
	rec.usage = u
	rec.mu.Unlock()
}

// admitted records the model and stream flag admission read.
func (rec *record) admitted(model string, stream bool) {
	rec.mu.Lock()
	rec.model, rec.stream = model, stream
	rec.mu.Unlock()
}

// setID replaces the request id the row is logged under.
func (rec *record) setID(id string) {
	rec.mu.Lock()
	rec.id = id
	rec.mu.Unlock()
}

// upstreamEnded records when the winning attempt's upstream body was read
// to its end (or broke).
func (rec *record) upstreamEnded(now time.Time) {
	rec.mu.Lock()
	rec.upstreamDone = now
	rec.mu.Unlock()
}

// addExchange adds one attempt's debug exchange to the request's capture,
// which it starts with maxBytes.
func (rec *record) addExchange(x *debugExchange, maxBytes int) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.debug == nil {
		rec.debug = &debugCapture{MaxBytes: maxBytes}
	}
	rec.debug.Exchanges = append(rec.debug.Exchanges, x)
}

// channelsTried lists the channels of the attempts made, in order.
func (rec *record) channelsTried() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	tried := make([]string, 0, len(rec.attempts))
	for _, a := range rec.attempts {
		tried = append(tried, a.Channel)
	}
	return tried
}

// recordView is what live views and channel tests read of a record while
// a stream may still change it.
type recordView struct {
	status   int
	errText  string
	attempts int
	ttfb     time.Duration
	usage    convert.Usage
	// route is the winning attempt, else the last one (zero when none).
	route attemptLog
	won   bool
}

// view copies what a reader outside the request needs, under the lock.
func (rec *record) view() recordView {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	v := recordView{status: rec.status, errText: rec.errText, attempts: len(rec.attempts), ttfb: rec.ttfb, usage: rec.usage}
	if a := rec.winner; a != nil {
		v.route, v.won = *a, true
	} else if n := len(rec.attempts); n > 0 {
		v.route = *rec.attempts[n-1]
	}
	return v
}

// overheadMsNow is overheadMs for a caller that does not hold rec.mu.
func (rec *record) overheadMsNow(now time.Time) int64 {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.overheadMs(now)
}

// overheadMs is the request's duration less the time spent waiting on
// upstreams: every failed attempt, and the winner from its start until its
// body was read. Called with rec.mu held.
func (rec *record) overheadMs(now time.Time) int64 {
	var wait time.Duration
	for _, a := range rec.attempts {
		if a == rec.winner {
			end := rec.upstreamDone
			if end.IsZero() {
				end = now
			}
			wait += end.Sub(a.start)
		} else {
			wait += time.Duration(a.DurationMs) * time.Millisecond
		}
	}
	return max(now.Sub(rec.start)-wait, 0).Milliseconds()
}

// finish hands the request's row to the log writer (never blocking) and
// releases the in-flight count and the request's slots. Three places call
// it: serveRequest once the handler answered, relayBody once a stream
// ended, and recoverRequest after a panic. Only the first call counts
// (request.finished): a handler that panics after it committed a stream
// is finished by recoverRequest, and the response reset that follows
// closes the relay body, which finishes again.
func (e *Engine) finish(r *request) {
	if !r.finished.CompareAndSwap(false, true) {
		return
	}
	e.inflight.Add(-1)
	if r.conn != nil {
		r.conn.Unwatch(r)
	}
	if r.chSlot != nil {
		r.chSlot.Release()
		r.chSlot = nil
	}
	if r.tokSlot != nil {
		r.tokSlot.Release()
		r.tokSlot = nil
	}
	e.active.mu.Lock()
	delete(e.active.reqs, r.id)
	e.active.mu.Unlock()
	end := e.bus.Active()
	var endEv live.Event
	if end {
		endEv = r.event("end", e.clock.Now())
	}
	rec := &r.rec
	rec.mu.Lock()
	defer rec.mu.Unlock()
	row := store.LogRow{
		Time:           rec.start,
		RequestID:      rec.id,
		Token:          rec.token,
		ClientProtocol: rec.clientProtocol,
		Model:          rec.model,
		Status:         rec.status,
		Attempts:       len(rec.attempts),
		TTFBMs:         rec.ttfb.Milliseconds(),
		DurationMs:     e.clock.Now().Sub(rec.start).Milliseconds(),
		Stream:         rec.stream,
		Incomplete:     rec.cutShort,
		ClientIP:       rec.clientIP,
		Error:          rec.errText,

		InputTokens:      rec.usage.Input,
		OutputTokens:     rec.usage.Output,
		CacheReadTokens:  rec.usage.CacheRead,
		CacheWriteTokens: rec.usage.CacheWrite,
		ReasoningTokens:  rec.usage.Reasoning,
	}
	last := rec.winner
	if last == nil && len(rec.attempts) > 0 {
		last = rec.attempts[len(rec.attempts)-1]
	}
	if last != nil {
		row.Channel, row.KeyFP, row.URL = last.Channel, last.KeyFP, last.URL
		row.UpstreamProtocol, row.UpstreamModel = string(last.Protocol), last.UpstreamModel
		row.FailureKind, row.FailureScope = string(last.Kind), string(last.Scope)
	}
	row.OverheadMs = rec.overheadMs(e.clock.Now())
	row.Cost, row.Unpriced = e.cost(r.snap, row.Channel, row.UpstreamModel, rec.model, rec.usage)
	if r.unbooked && row.Channel != "" {
		row.Unpriced = true // no usage was read: the cost is unknown, not 0
	}
	if end {
		endEv.Cost = row.Cost
		e.bus.Publish(endEv)
	}
	e.reg.ledger.Settle(rec.token, r.costReserved, row.Channel, clock.UTCDay(row.Time), row.Cost)
	if len(rec.attempts) > 0 {
		row.AttemptsJSON = string(appendAttemptsJSON(make([]byte, 0, 256*len(rec.attempts)), rec.attempts))
	}
	if rec.debug != nil {
		row.Debug = rec.debug.encode()
	}
	if e.logs == nil {
		e.noLogs.Add(1)
		return
	}
	e.logs.Add(row)
}

// cost prices one request's usage on the model that was sent upstream, or,
// when that name has no price (a relay's renamed variant), on the model
// the client asked for; with the channel's cost_multiplier. An unknown
// model costs 0 with unpriced true, so its row is flagged rather than
// silently free, and it is reported once per model in the log.
func (e *Engine) cost(snap *config.Snapshot, channel, upstreamModel, clientModel string, u convert.Usage) (usd float64, unpriced bool) {
	if u.Input == 0 && u.Output == 0 {
		return 0, false
	}
	mult := 1.0
	if ch := snap.Channel(channel); ch != nil {
		mult = ch.CostMultiplier
	}
	pu := pricing.Usage{
		Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, Reasoning: u.Reasoning,
		CacheWrite: u.CacheWrite - u.CacheWrite1h, CacheWrite1h: u.CacheWrite1h, // 5-minute and 1-hour writes apart
		ServiceTier: u.ServiceTier,
	}
	table := e.Prices(snap)
	c := table.Cost(upstreamModel, pu, mult)
	if !c.Known && clientModel != "" && clientModel != upstreamModel {
		c = table.Cost(clientModel, pu, mult)
	}
	if !c.Known {
		if _, seen := e.reg.unpriced.loadOrStore(upstreamModel, true); !seen {
			e.log.Warn("no price for model; its requests are logged as unpriced with cost 0 (add it under pricing: in the config)", "model", upstreamModel)
		}
		return 0, true
	}
	return c.USD, false
}

// appendAttemptsJSON encodes the attempts column: the same JSON
// encoding/json gives the attemptLog fields (names, order, omitempty),
// written straight into one buffer. json.Marshal reflected over every
// field of every attempt on each request (perf).
func appendAttemptsJSON(b []byte, attempts []*attemptLog) []byte {
	b = append(b, '[')
	for i, a := range attempts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"channel":`...)
		b = protocol.AppendJSONString(b, a.Channel)
		b = append(b, `,"key":`...)
		b = protocol.AppendJSONString(b, a.KeyFP)
		b = append(b, `,"url":`...)
		b = protocol.AppendJSONString(b, a.URL)
		b = append(b, `,"protocol":`...)
		b = protocol.AppendJSONString(b, string(a.Protocol))
		b = append(b, `,"upstream_model":`...)
		b = protocol.AppendJSONString(b, a.UpstreamModel)
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(a.Status), 10)
		if a.Kind != "" {
			b = append(b, `,"kind":`...)
			b = protocol.AppendJSONString(b, string(a.Kind))
		}
		if a.Scope != "" {
			b = append(b, `,"scope":`...)
			b = protocol.AppendJSONString(b, string(a.Scope))
		}
		b = append(b, `,"duration_ms":`...)
		b = strconv.AppendInt(b, a.DurationMs, 10)
		if a.Error != "" {
			b = append(b, `,"error":`...)
			b = protocol.AppendJSONString(b, a.Error)
		}
		if len(a.Notes) > 0 {
			b = append(b, `,"notes":[`...)
			for j, n := range a.Notes {
				if j > 0 {
					b = append(b, ',')
				}
				b = protocol.AppendJSONString(b, n)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return append(b, ']')
}
