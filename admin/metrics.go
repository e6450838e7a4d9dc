package admin

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/internal/promtext"
	"github.com/ccload/ccload/store"
)

// Metrics is ccload's Prometheus registry (package promtext). Request counters are fed from the
// log rows as the engine hands them to the log writer (wrap the writer with
// Sink), so a request is counted exactly once, when it ends, with its
// attempts; gauges (in flight, cooldowns, config, log queue) are read from
// the Server at scrape time. API.md lists every metric.
//
// Label values are bounded: channel and token names come from the config,
// protocols and scopes are fixed sets, and a model the config does not route
// is counted as "other", so a client cannot grow the series by sending
// made-up model names.
type Metrics struct {
	reg promtext.Registry
	cfg Config
	srv atomic.Pointer[Server]

	requests *promtext.CounterVec
	attempts *promtext.CounterVec
	failures *promtext.CounterVec
	ttfb     *promtext.HistogramVec
	duration *promtext.HistogramVec
	overhead *promtext.Histogram
	tokens   *promtext.CounterVec
	cost     *promtext.CounterVec

	seriesMu sync.RWMutex
	series   map[seriesKey]*requestSeries
}

// requestSeries are the series a finished request counts into, found with
// one lookup rather than one per family, each building its key from the
// label values and hashing it (perf: Observe was 2–3.5% of the
// gateway's CPU). The series a request may leave untouched are made on
// first use, so /metrics shows none that nothing counted into.
type requestSeries struct {
	requests, cost *promtext.Counter
	duration       *promtext.Histogram
	ttfb           atomic.Pointer[promtext.Histogram]
	attempts       atomic.Pointer[promtext.Counter]
	tokens         [len(tokenTypes)]atomic.Pointer[promtext.Counter]
}

type seriesKey struct {
	channel, model, token, class, protocol string
	stream                                 bool
}

// maxCachedSeries bounds the cache of requestSeries; it starts over
// beyond it (the series themselves stay in the registry). The label
// values are bounded by the config, but reloads may rename.
const maxCachedSeries = 4096

var tokenTypes = [...]string{"input", "output", "cache_read", "cache_write", "reasoning"}

// NewMetrics returns the registry; cfg gives the models that may appear as
// label values.
func NewMetrics(cfg Config) *Metrics {
	m := &Metrics{cfg: cfg, series: map[seriesKey]*requestSeries{}}
	r := &m.reg
	m.requests = r.CounterVec("ccload_requests_total",
		"Client requests by the channel that answered (or was tried last), model, status class and client protocol.",
		"channel", "model", "status_class", "client_protocol")
	m.attempts = r.CounterVec("ccload_upstream_attempts_total", "Upstream attempts by channel.", "channel")
	m.failures = r.CounterVec("ccload_upstream_failures_total",
		"Failed upstream attempts by channel, the scope that was cooled (none for client faults) and the failure kind.",
		"channel", "scope", "kind")
	m.ttfb = r.HistogramVec("ccload_ttfb_seconds",
		"Time from the client request to the first byte of the answer, for requests that got one.",
		[]float64{.05, .1, .25, .5, 1, 2, 4, 8, 15, 30, 60}, "channel")
	m.duration = r.HistogramVec("ccload_request_duration_seconds",
		"Time from the client request to its end, by channel and whether it streamed.",
		[]float64{.1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}, "channel", "stream")
	m.overhead = r.HistogramVec("ccload_gateway_overhead_seconds",
		"Time ccload itself spent on a request: its duration minus the time spent waiting on upstreams (answers 'is the proxy slow?').",
		[]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}).With()
	m.tokens = r.CounterVec("ccload_tokens_total",
		"Tokens by channel, model and type (input, output, cache_read, cache_write, reasoning).",
		"channel", "model", "type")
	m.cost = r.CounterVec("ccload_cost_usd_total", "Cost in USD by channel, model and client token.",
		"channel", "model", "token")
	r.Collect(m.collectGauges)
	r.Collect(m.collectWebSockets)
	r.Collect(promtext.GoRuntime)
	r.Collect(promtext.Process)
	return m
}

// bind gives the scrape-time gauges their source.
func (m *Metrics) bind(s *Server) { m.srv.Store(s) }

// Sink wraps the engine's log sink so that every finished request is
// counted before it goes to next.
func (m *Metrics) Sink(next engine.LogSink) engine.LogSink { return sink{m, next} }

type sink struct {
	m    *Metrics
	next engine.LogSink
}

func (s sink) Add(r store.LogRow) {
	s.m.Observe(&r)
	s.next.Add(r)
}

func (s sink) Stats() store.WriterStats { return s.next.Stats() }

// Observe counts one finished request. It never blocks.
func (m *Metrics) Observe(r *store.LogRow) {
	model := m.modelLabel(r.Model)
	s := m.seriesOf(r, model)
	s.requests.Inc()
	if r.TTFBMs > 0 || (!r.IsError() && r.Attempts > 0) { // answered by an upstream
		h := s.ttfb.Load()
		if h == nil {
			h = m.ttfb.With(r.Channel)
			s.ttfb.Store(h)
		}
		h.Observe(float64(r.TTFBMs) / 1000)
	}
	s.duration.Observe(float64(r.DurationMs) / 1000)
	if r.Attempts > 0 {
		m.overhead.Observe(float64(r.OverheadMs) / 1000)
	}
	for i, n := range [len(tokenTypes)]int64{r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheWriteTokens, r.ReasoningTokens} {
		if n > 0 {
			c := s.tokens[i].Load()
			if c == nil {
				c = m.tokens.With(r.Channel, model, tokenTypes[i])
				s.tokens[i].Store(c)
			}
			c.Add(float64(n))
		}
	}
	// Touch the cost series even at 0, so that it exists before pricing
	// gives it a value and rate() sees its start.
	s.cost.Add(max(r.Cost, 0))
	if r.AttemptsJSON == "" {
		return
	}
	if r.Attempts == 1 && r.FailureKind == "" {
		// The common case, one attempt that did not fail: the row's
		// channel and failure fields are that attempt's, so the attempts
		// column need not be parsed.
		c := s.attempts.Load()
		if c == nil {
			c = m.attempts.With(r.Channel)
			s.attempts.Store(c)
		}
		c.Inc()
		return
	}
	gjson.Parse(r.AttemptsJSON).ForEach(func(_, a gjson.Result) bool {
		ch := a.Get("channel").String()
		m.attempts.With(ch).Inc()
		if kind := a.Get("kind").String(); kind != "" {
			scope := a.Get("scope").String()
			if scope == "" {
				scope = "none"
			}
			m.failures.With(ch, scope, kind).Inc()
		}
		return true
	})
}

// seriesOf is the requestSeries of r's labels, model being its label.
func (m *Metrics) seriesOf(r *store.LogRow, model string) *requestSeries {
	k := seriesKey{r.Channel, model, r.Token, statusClass(r.Status), r.ClientProtocol, r.Stream}
	m.seriesMu.RLock()
	s := m.series[k]
	m.seriesMu.RUnlock()
	if s != nil {
		return s
	}
	s = &requestSeries{
		requests: m.requests.With(k.channel, k.model, k.class, k.protocol),
		duration: m.duration.With(k.channel, strconv.FormatBool(k.stream)),
		cost:     m.cost.With(k.channel, k.model, k.token),
	}
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	if old := m.series[k]; old != nil {
		return old
	}
	if len(m.series) >= maxCachedSeries {
		clear(m.series)
	}
	m.series[k] = s
	return s
}

func (m *Metrics) modelLabel(model string) string {
	if model == "" {
		return ""
	}
	if m.cfg != nil && len(m.cfg.Current().Routes(model)) > 0 {
		return model
	}
	return "other"
}

var statusClasses = [...]string{1: "1xx", 2: "2xx", 3: "3xx", 4: "4xx", 5: "5xx"}

func statusClass(s int) string {
	if s >= 100 && s < 600 {
		return statusClasses[s/100]
	}
	return "none"
}

// serveMetrics is GET /metrics, for server.metrics_token or the admin
// credentials (MayObserve): its series name every client token and its
// spend, which is nobody else's business.
func (s *Server) serveMetrics(ctx *fasthttp.RequestCtx) {
	if !s.MayObserve(ctx) {
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="ccload metrics"`)
		s.writeError(ctx, &httpError{Status: fasthttp.StatusUnauthorized,
			Msg: "/metrics needs Authorization: Bearer <server.metrics_token> (or the admin password)"})
		return
	}
	ctx.SetContentType(promtext.ContentType)
	ctx.SetBody(s.metrics.reg.AppendText(nil))
}

// desc names a metric read at scrape time, with its label names.
type desc struct {
	name, help string
	labels     []string
}

var (
	descInFlight     = desc{"ccload_in_flight_requests", "Client requests being served now.", nil}
	descUnauthorized = desc{"ccload_unauthorized_requests_total", "Proxy requests refused for a missing or invalid client token (not logged row by row).", nil}
	descCooldowns    = desc{"ccload_cooldowns_active", "Components cooling now, by scope.", []string{"scope"}}
	descPaused       = desc{"ccload_channel_paused", "1 when the channel is paused at runtime (admin API override).", []string{"channel"}}
	descCheckOK      = desc{"ccload_channel_check_ok", "1 when the channel's latest scheduled check (check: in the config) passed, 0 when it failed; absent before the first check.", []string{"channel"}}
	descReloadOK     = desc{"ccload_config_last_reload_successful", "1 when the last config (re)load succeeded; 0 while an old config serves after a failed reload.", nil}
	descReloadTime   = desc{"ccload_config_last_reload_success_timestamp_seconds", "When the serving config was loaded (unix seconds).", nil}
	descReloads      = desc{"ccload_config_reloads_total", "Config reloads since start by result (success swapped a new config in; failure kept the old one).", []string{"result"}}
	descQueue        = desc{"ccload_log_queue_depth", "Log rows accepted and not yet written.", nil}
	descWritten      = desc{"ccload_log_rows_written_total", "Log rows written to the database.", nil}
	descDropped      = desc{"ccload_log_rows_dropped_total", "Log rows lost, by reason: queue_full (dropped on a full queue), rejected (refused by the database), unwritten (still queued at shutdown).", []string{"reason"}}
	descWriteErrors  = desc{"ccload_log_write_errors_total", "Failed log batch writes, retries included.", nil}
	descDegraded     = desc{"ccload_storage_degraded", "1 while log writes are failing (the database is down or refusing them; rows wait in memory), 0 otherwise.", nil}
	descEvDropped    = desc{"ccload_events_dropped_total", "Request events lost to slow /admin/events subscribers.", nil}
)

// unauthorizedCounter is implemented by engines that count requests
// refused for want of a valid client token.
type unauthorizedCounter interface{ Unauthorized() int64 }

// collectGauges emits the values read from the Server at scrape time.
func (m *Metrics) collectGauges(e *promtext.Emitter) {
	s := m.srv.Load()
	if s == nil {
		return
	}
	gauge := func(d desc, v float64, labels ...string) {
		e.Gauge(d.name, d.help, v, promtext.Pairs(d.labels, labels)...)
	}
	counter := func(d desc, v float64, labels ...string) {
		e.Counter(d.name, d.help, v, promtext.Pairs(d.labels, labels)...)
	}
	gauge(descInFlight, float64(s.eng.InFlight()))
	if u, ok := s.eng.(unauthorizedCounter); ok {
		counter(descUnauthorized, float64(u.Unauthorized()))
	}
	byScope := map[string]int{}
	for _, e := range s.eng.Cooldowns().List() {
		byScope[string(e.Key.Scope)]++
	}
	for _, sc := range []failure.Scope{failure.ScopeKey, failure.ScopeModel, failure.ScopeURL, failure.ScopeChannel} {
		gauge(descCooldowns, float64(byScope[string(sc)]), string(sc))
	}
	for _, c := range s.eng.ChannelStates() {
		v := 0.0
		if c.Paused {
			v = 1
		}
		gauge(descPaused, v, c.Name)
		if c.LastCheck != nil {
			ok := 0.0
			if c.LastCheck.OK {
				ok = 1
			}
			gauge(descCheckOK, ok, c.Name)
		}
	}

	st := s.cfg.Status()
	s.history.sync(st)
	ok := 1.0
	if st.Error != "" {
		ok = 0
	}
	gauge(descReloadOK, ok)
	gauge(descReloadTime, float64(st.LoadedAt.UnixMilli())/1000)
	counter(descReloads, float64(st.Reloads), "success")
	counter(descReloads, float64(st.Failures), "failure")

	if s.logs != nil {
		ws := s.logs.Stats()
		gauge(descQueue, float64(ws.Queued))
		counter(descWritten, float64(ws.Written))
		counter(descDropped, float64(ws.Dropped), "queue_full")
		counter(descDropped, float64(ws.Rejected), "rejected")
		counter(descDropped, float64(ws.Unwritten), "unwritten")
		counter(descWriteErrors, float64(ws.WriteErrors))
		degraded := 0.0
		if ws.Degraded() {
			degraded = 1
		}
		gauge(descDegraded, degraded)
	}
	counter(descEvDropped, float64(s.eng.Events().Dropped()))
}
