package admin

import (
	"bytes"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"
	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"

	"ccload/engine"
	"ccload/engine/failure"
	"ccload/store"
)

// Metrics is ccload's Prometheus registry. Request counters are fed from the
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
	reg *prometheus.Registry
	cfg Config
	srv atomic.Pointer[Server]

	requests *prometheus.CounterVec
	attempts *prometheus.CounterVec
	failures *prometheus.CounterVec
	ttfb     *prometheus.HistogramVec
	duration *prometheus.HistogramVec
	overhead prometheus.Histogram
	tokens   *prometheus.CounterVec
	cost     *prometheus.CounterVec

	// The children Observe touches on every request.
	requestsOf *children[prometheus.Counter]
	attemptsOf *children[prometheus.Counter]
	ttfbOf     *children[prometheus.Observer]
	durationOf *children[prometheus.Observer]
	tokensOf   *children[prometheus.Counter]
	costOf     *children[prometheus.Counter]
}

// NewMetrics returns the registry; cfg gives the models that may appear as
// label values.
func NewMetrics(cfg Config) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		cfg: cfg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ccload_requests_total",
			Help: "Client requests by the channel that answered (or was tried last), model, status class and client protocol.",
		}, []string{"channel", "model", "status_class", "client_protocol"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ccload_upstream_attempts_total",
			Help: "Upstream attempts by channel.",
		}, []string{"channel"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ccload_upstream_failures_total",
			Help: "Failed upstream attempts by channel, the scope that was cooled (none for client faults) and the failure kind.",
		}, []string{"channel", "scope", "kind"}),
		ttfb: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ccload_ttfb_seconds",
			Help:    "Time from the client request to the first byte of the answer, for requests that got one.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2, 4, 8, 15, 30, 60},
		}, []string{"channel"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ccload_request_duration_seconds",
			Help:    "Time from the client request to its end, by channel and whether it streamed.",
			Buckets: []float64{.1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600},
		}, []string{"channel", "stream"}),
		overhead: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ccload_gateway_overhead_seconds",
			Help:    "Time ccload itself spent on a request: its duration minus the time spent waiting on upstreams (answers 'is the proxy slow?').",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ccload_tokens_total",
			Help: "Tokens by channel, model and type (input, output, cache_read, cache_write, reasoning).",
		}, []string{"channel", "model", "type"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ccload_cost_usd_total",
			Help: "Cost in USD by channel, model and client token.",
		}, []string{"channel", "model", "token"}),
	}
	m.requestsOf = newChildren(m.requests.WithLabelValues)
	m.attemptsOf = newChildren(m.attempts.WithLabelValues)
	m.ttfbOf = newChildren(m.ttfb.WithLabelValues)
	m.durationOf = newChildren(m.duration.WithLabelValues)
	m.tokensOf = newChildren(m.tokens.WithLabelValues)
	m.costOf = newChildren(m.cost.WithLabelValues)
	m.reg.MustRegister(m.requests, m.attempts, m.failures, m.ttfb, m.duration, m.overhead, m.tokens, m.cost,
		gauges{m}, wsGauges{m}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
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
	s.m.Observe(r)
	s.next.Add(r)
}

func (s sink) Stats() store.WriterStats { return s.next.Stats() }

// Observe counts one finished request. It never blocks.
func (m *Metrics) Observe(r store.LogRow) {
	model := m.modelLabel(r.Model)
	m.requestsOf.get(labels{r.Channel, model, statusClass(r.Status), r.ClientProtocol}, 4).Inc()
	if r.TTFBMs > 0 || (!r.IsError() && r.Attempts > 0) { // answered by an upstream
		m.ttfbOf.get(labels{r.Channel}, 1).Observe(float64(r.TTFBMs) / 1000)
	}
	m.durationOf.get(labels{r.Channel, strconv.FormatBool(r.Stream)}, 2).Observe(float64(r.DurationMs) / 1000)
	if r.Attempts > 0 {
		m.overhead.Observe(float64(r.OverheadMs) / 1000)
	}
	for _, t := range []struct {
		typ string
		n   int64
	}{
		{"input", r.InputTokens}, {"output", r.OutputTokens}, {"cache_read", r.CacheReadTokens},
		{"cache_write", r.CacheWriteTokens}, {"reasoning", r.ReasoningTokens},
	} {
		if t.n > 0 {
			m.tokensOf.get(labels{r.Channel, model, t.typ}, 3).Add(float64(t.n))
		}
	}
	// Touch the cost series even at 0, so that it exists before pricing
	// gives it a value and rate() sees its start.
	m.costOf.get(labels{r.Channel, model, r.Token}, 3).Add(max(r.Cost, 0))
	if r.AttemptsJSON == "" {
		return
	}
	if r.Attempts == 1 && r.FailureKind == "" {
		// The common case, one attempt that did not fail: the row's
		// channel and failure fields are that attempt's, so the attempts
		// column need not be parsed.
		m.attemptsOf.get(labels{r.Channel}, 1).Inc()
		return
	}
	gjson.Parse(r.AttemptsJSON).ForEach(func(_, a gjson.Result) bool {
		ch := a.Get("channel").String()
		m.attemptsOf.get(labels{ch}, 1).Inc()
		if kind := a.Get("kind").String(); kind != "" {
			scope := a.Get("scope").String()
			if scope == "" {
				scope = "none"
			}
			m.failures.WithLabelValues(ch, scope, kind).Inc()
		}
		return true
	})
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

// serveMetrics is GET /metrics (no auth: it shows counts and names, no
// secrets).
func (s *Server) serveMetrics(ctx *fasthttp.RequestCtx) {
	mfs, err := s.metrics.reg.Gather()
	if err != nil {
		s.log.Warn("metrics: gather", "err", err) // partial output is still served
	}
	var buf bytes.Buffer
	format := expfmt.NewFormat(expfmt.TypeTextPlain)
	enc := expfmt.NewEncoder(&buf, format)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			s.log.Warn("metrics: encode", "err", err)
		}
	}
	ctx.SetContentType(string(format))
	ctx.SetBody(buf.Bytes())
}

// gauges reads the live values at scrape time.
type gauges struct{ m *Metrics }

// unauthorizedCounter is implemented by engines that count requests
// refused for want of a valid client token.
type unauthorizedCounter interface{ Unauthorized() int64 }

var (
	descInFlight     = prometheus.NewDesc("ccload_in_flight_requests", "Client requests being served now.", nil, nil)
	descUnauthorized = prometheus.NewDesc("ccload_unauthorized_requests_total", "Proxy requests refused for a missing or invalid client token (not logged row by row).", nil, nil)
	descCooldowns    = prometheus.NewDesc("ccload_cooldowns_active", "Components cooling now, by scope.", []string{"scope"}, nil)
	descPaused       = prometheus.NewDesc("ccload_channel_paused", "1 when the channel is paused at runtime (admin API override).", []string{"channel"}, nil)
	descCheckOK      = prometheus.NewDesc("ccload_channel_check_ok", "1 when the channel's latest scheduled check (check: in the config) passed, 0 when it failed; absent before the first check.", []string{"channel"}, nil)
	descReloadOK     = prometheus.NewDesc("ccload_config_last_reload_successful", "1 when the last config (re)load succeeded; 0 while an old config serves after a failed reload.", nil, nil)
	descReloadTime   = prometheus.NewDesc("ccload_config_last_reload_success_timestamp_seconds", "When the serving config was loaded (unix seconds).", nil, nil)
	descReloads      = prometheus.NewDesc("ccload_config_reloads_total", "Config reloads since start by result (success swapped a new config in; failure kept the old one).", []string{"result"}, nil)
	descQueue        = prometheus.NewDesc("ccload_log_queue_depth", "Log rows accepted and not yet written.", nil, nil)
	descWritten      = prometheus.NewDesc("ccload_log_rows_written_total", "Log rows written to the database.", nil, nil)
	descDropped      = prometheus.NewDesc("ccload_log_rows_dropped_total", "Log rows lost, by reason: queue_full (dropped on a full queue), rejected (refused by the database), unwritten (still queued at shutdown).", []string{"reason"}, nil)
	descWriteErrors  = prometheus.NewDesc("ccload_log_write_errors_total", "Failed log batch writes, retries included.", nil, nil)
	descDegraded     = prometheus.NewDesc("ccload_storage_degraded", "1 while log writes are failing (the database is down or refusing them; rows wait in memory), 0 otherwise.", nil, nil)
	descEvDropped    = prometheus.NewDesc("ccload_events_dropped_total", "Request events lost to slow /admin/events subscribers.", nil, nil)
)

func (g gauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descInFlight, descUnauthorized, descCooldowns, descPaused, descCheckOK, descReloadOK,
		descReloadTime, descReloads, descQueue, descWritten, descDropped, descWriteErrors, descEvDropped, descDegraded} {
		ch <- d
	}
}

func (g gauges) Collect(ch chan<- prometheus.Metric) {
	s := g.m.srv.Load()
	if s == nil {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
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
