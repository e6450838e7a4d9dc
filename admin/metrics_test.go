package admin_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/ccload/ccload/admin"
	"github.com/ccload/ccload/store"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape fetches /metrics (with the admin password, which it needs) and
// parses it with Prometheus' own text parser.
func scrape(t *testing.T, e *env) map[string]*dto.MetricFamily {
	t.Helper()
	resp, body := e.call(t, "GET", "/metrics", map[string]string{"Authorization": "Bearer " + adminPass}, "")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("/metrics: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, body)
	}
	return mfs
}

// value returns the value of the series of family name whose labels include
// all of want ("k=v" pairs), summed over the matching series.
func value(t *testing.T, mfs map[string]*dto.MetricFamily, name string, want ...string) float64 {
	t.Helper()
	mf := mfs[name]
	if mf == nil {
		t.Fatalf("no metric family %s", name)
	}
	sum, found := 0.0, false
next:
	for _, m := range mf.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for _, w := range want {
			k, v, _ := strings.Cut(w, "=")
			if have[k] != v {
				continue next
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	if !found {
		var have []string
		for _, m := range mf.Metric {
			have = append(have, m.String())
		}
		sort.Strings(have)
		t.Fatalf("%s{%s}: no series; have\n%s", name, strings.Join(want, ","), strings.Join(have, "\n"))
	}
	return sum
}

func TestMetrics(t *testing.T) {
	e := start(t)
	e.proxy(t, "claude-x", false, "")
	e.proxy(t, "claude-x", true, "")
	e.proxy(t, "claude-y", false, "fail-401")  // both keys fail: key and channel cooldowns
	e.proxy(t, "made-up-model-123", false, "") // 404 from the gateway
	e.call(t, "POST", "/v1/messages", map[string]string{"x-api-key": "sk-not-a-token"}, `{}`)
	e.waitRows(t, 4)

	mfs := scrape(t, e)
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"ccload_requests_total", []string{"channel=main", "model=claude-x", "status_class=2xx", "client_protocol=anthropic"}, 2},
		{"ccload_requests_total", []string{"channel=main", "model=claude-y"}, 1},
		{"ccload_requests_total", []string{"model=other", "status_class=4xx"}, 1},
		{"ccload_upstream_attempts_total", []string{"channel=main"}, 4},
		{"ccload_upstream_failures_total", []string{"channel=main", "scope=key", "kind=auth"}, 2},
		{"ccload_ttfb_seconds", []string{"channel=main"}, 2},
		{"ccload_request_duration_seconds", []string{"channel=main", "stream=true"}, 1},
		{"ccload_tokens_total", []string{"channel=main", "model=claude-x", "type=input"}, 2 * 33},
		{"ccload_cost_usd_total", []string{"channel=main", "model=claude-x", "token=alice"}, 0},
		{"ccload_in_flight_requests", nil, 0},
		{"ccload_unauthorized_requests_total", nil, 1},
		{"ccload_cooldowns_active", []string{"scope=key"}, 2},
		{"ccload_cooldowns_active", []string{"scope=channel"}, 1},
		{"ccload_cooldowns_active", []string{"scope=url"}, 0},
		{"ccload_channel_paused", []string{"channel=main"}, 0},
		{"ccload_config_last_reload_successful", nil, 1},
		{"ccload_config_last_reload_success_timestamp_seconds", nil, -1}, // checked below
		{"ccload_config_reloads_total", []string{"result=failure"}, 0},
		{"ccload_log_rows_written_total", nil, 4},
		{"ccload_log_rows_dropped_total", []string{"reason=queue_full"}, 0},
		{"ccload_log_queue_depth", nil, 0},
		{"ccload_storage_degraded", nil, 0},
		{"ccload_events_dropped_total", nil, 0},
	}
	for _, c := range checks {
		got := value(t, mfs, c.name, c.labels...)
		if c.want >= 0 && got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, strings.Join(c.labels, ","), got, c.want)
		}
	}
	if ts := value(t, mfs, "ccload_config_last_reload_success_timestamp_seconds"); ts < 1e9 {
		t.Errorf("reload timestamp %v", ts)
	}
	if mfs["ccload_ttfb_seconds"].GetType() != dto.MetricType_HISTOGRAM {
		t.Errorf("ttfb type %v", mfs["ccload_ttfb_seconds"].GetType())
	}
	if mfs["go_goroutines"] == nil || mfs["process_start_time_seconds"] == nil {
		t.Error("runtime and process collectors missing")
	}

	// A failed reload shows, and the old config keeps serving.
	e.call(t, "POST", "/admin/channels/main/pause", bearer, "")
	writeFile(t, e.Src.Status().File, "version: 1\nchannels: [\n")
	resp, body := e.call(t, "POST", "/admin/config/reload", bearer, "")
	if resp.StatusCode != 422 || !strings.Contains(body, "previous config keeps serving") {
		t.Fatalf("bad reload: %d %s", resp.StatusCode, body)
	}
	mfs = scrape(t, e)
	if v := value(t, mfs, "ccload_config_last_reload_successful"); v != 0 {
		t.Errorf("last reload successful = %v after a failure", v)
	}
	if v := value(t, mfs, "ccload_config_reloads_total", "result=failure"); v != 1 {
		t.Errorf("reload failures = %v", v)
	}
	if v := value(t, mfs, "ccload_channel_paused", "channel=main"); v != 1 {
		t.Errorf("paused gauge = %v", v)
	}
	scenario{method: "GET", url: "/admin/config", headers: bearer, status: 200, contains: []string{
		`"history":[{"time":"`, `"result":"failed","error":"`, `"count":1}`, `"result":"loaded"`}}.run(t, e)
}

// TestObserveDoesNotAllocate: counting a request whose series exist
// already allocates nothing (it allocated 8 times a request: each series
// lookup moved its label values to the heap).
func TestObserveDoesNotAllocate(t *testing.T) {
	m := admin.NewMetrics(nil)
	row := store.LogRow{
		Channel: "c1", Model: "m", Token: "t", Status: 200, ClientProtocol: "anthropic",
		Attempts: 1, AttemptsJSON: `[{"channel":"c1"}]`, TTFBMs: 12, DurationMs: 40,
		InputTokens: 10, OutputTokens: 20, CacheReadTokens: 5, Cost: 0.001,
	}
	m.Observe(&row)
	if n := testing.AllocsPerRun(100, func() { m.Observe(&row) }); n != 0 {
		t.Fatalf("Observe allocated %.1f times per request", n)
	}
}
