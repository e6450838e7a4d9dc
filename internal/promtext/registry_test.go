package promtext_test

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ccload/ccload/internal/promtext"
)

// TestTextFormat checks the exact exposition of each kind of family:
// families by name, series by label values, histogram buckets cumulative
// with _count equal to the +Inf bucket, escapes in HELP and label values.
func TestTextFormat(t *testing.T) {
	var r promtext.Registry
	c := r.CounterVec("t_requests_total", "Requests by channel.\nSecond line \\ here.", "channel", "code")
	c.With("b", "200").Add(2)
	c.With("a", "500").Inc()
	c.With(`q"uo\te`+"\n", "200").Add(0.5)
	c.With("a", "500").Add(-3) // ignored: counters never go down
	h := r.HistogramVec("t_latency_seconds", "Latency.", []float64{0.1, 1}, "channel")
	h.With("a").Observe(0.05)
	h.With("a").Observe(0.1) // upper bounds are inclusive
	h.With("a").Observe(5)
	r.Collect(func(e *promtext.Emitter) {
		e.Gauge("t_paused", "Paused.", 1, "channel", "z")
		e.Gauge("t_paused", "Paused.", 0, "channel", "y")
		e.Counter("t_dropped_total", "Dropped.", 7)
		e.Summary("t_pause_seconds", "Pauses.", [][2]float64{{0, 0.001}, {1, 0.25}}, 0.5, 3)
	})
	want := `# HELP t_dropped_total Dropped.
# TYPE t_dropped_total counter
t_dropped_total 7
# HELP t_latency_seconds Latency.
# TYPE t_latency_seconds histogram
t_latency_seconds_bucket{channel="a",le="0.1"} 2
t_latency_seconds_bucket{channel="a",le="1"} 2
t_latency_seconds_bucket{channel="a",le="+Inf"} 3
t_latency_seconds_sum{channel="a"} 5.15
t_latency_seconds_count{channel="a"} 3
# HELP t_pause_seconds Pauses.
# TYPE t_pause_seconds summary
t_pause_seconds{quantile="0"} 0.001
t_pause_seconds{quantile="1"} 0.25
t_pause_seconds_sum 0.5
t_pause_seconds_count 3
# HELP t_paused Paused.
# TYPE t_paused gauge
t_paused{channel="y"} 0
t_paused{channel="z"} 1
# HELP t_requests_total Requests by channel.\nSecond line \\ here.
# TYPE t_requests_total counter
t_requests_total{channel="a",code="500"} 1
t_requests_total{channel="b",code="200"} 2
t_requests_total{channel="q\"uo\\te\n",code="200"} 0.5
`
	got := string(r.AppendText(nil))
	if got != want {
		t.Fatalf("exposition:\n%s\nwant:\n%s", got, want)
	}
	// Prometheus' own parser reads it back.
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(got))
	if err != nil {
		t.Fatalf("Prometheus parser: %v", err)
	}
	hist := mfs["t_latency_seconds"].Metric[0].Histogram
	if n, count := len(hist.Bucket), hist.GetSampleCount(); n != 3 || count != 3 {
		t.Errorf("parsed %d buckets and a count of %d, want 3 and 3", n, count)
	}
}

func TestSpecialValues(t *testing.T) {
	var r promtext.Registry
	r.Collect(func(e *promtext.Emitter) {
		e.Gauge("t_inf", "x", math.Inf(1))
		e.Gauge("t_nan", "x", math.NaN())
		e.Gauge("t_big", "x", 1.5e300)
	})
	got := string(r.AppendText(nil))
	for _, line := range []string{"t_inf +Inf\n", "t_nan NaN\n", "t_big 1.5e+300\n"} {
		if !strings.Contains(got, line) {
			t.Errorf("missing %q in\n%s", line, got)
		}
	}
}

// TestConcurrentUpdates: adds and observations from many goroutines,
// scraped while they run, all land (run with -race).
func TestConcurrentUpdates(t *testing.T) {
	var r promtext.Registry
	c := r.CounterVec("t_total", "x", "k")
	h := r.HistogramVec("t_seconds", "x", []float64{1}).With()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				c.With(string(rune('a' + g%2))).Add(0.5)
				h.Observe(float64(i % 2))
			}
		}()
	}
	for range 10 {
		r.AppendText(nil)
	}
	wg.Wait()
	if a, b := c.With("a").Value(), c.With("b").Value(); a != 2000 || b != 2000 {
		t.Fatalf("counters %v and %v, want 2000 each", a, b)
	}
	got := string(r.AppendText(nil))
	for _, line := range []string{`t_seconds_bucket{le="1"} 8000`, "t_seconds_count 8000", "t_seconds_sum 4000"} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("missing %q in\n%s", line, got)
		}
	}
}

// TestSeriesAddedWhileOthersAreRead: lookups read a copy of the series
// that is refreshed as new ones arrive; a series made while others are
// read must be the one every later lookup finds, and counted once.
func TestSeriesAddedWhileOthersAreRead(t *testing.T) {
	var r promtext.Registry
	c := r.CounterVec("t_total", "x", "k")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				// Each goroutine walks the same 300 series from a different
				// start, so series are made and read at once.
				c.With(strconv.Itoa((i + g*37) % 300)).Inc()
			}
		}()
	}
	wg.Wait()
	var total float64
	for k := range 300 {
		total += c.With(strconv.Itoa(k)).Value()
	}
	if total != 8*2000 {
		t.Fatalf("the series hold %v increments, want %d", total, 8*2000)
	}
	if n := strings.Count(string(r.AppendText(nil)), "\nt_total{"); n != 300 {
		t.Fatalf("the text has %d series, want 300", n)
	}
}

// TestWithFindsAChildWithoutAllocating: the lookup of an existing series
// is on the request path (admin.Metrics.Observe).
func TestWithFindsAChildWithoutAllocating(t *testing.T) {
	var r promtext.Registry
	c := r.CounterVec("t_total", "x", "channel", "model", "status")
	h := r.HistogramVec("t_seconds", "x", []float64{1}, "channel")
	c.With("main", "claude-x", "2xx").Inc()
	h.With("main").Observe(0.5)
	if n := testing.AllocsPerRun(100, func() {
		c.With("main", "claude-x", "2xx").Inc()
		h.With("main").Observe(0.5)
	}); n != 0 {
		t.Fatalf("With allocated %.1f times for series that exist", n)
	}
	if v := c.With("main", "claude-x", "2xx").Value(); v != 102 {
		t.Fatalf("counter %v after 102 increments", v)
	}
}

func TestWrongLabelCountPanics(t *testing.T) {
	var r promtext.Registry
	c := r.CounterVec("t_total", "x", "a", "b")
	defer func() {
		if recover() == nil {
			t.Fatal("With with one value for two labels did not panic")
		}
	}()
	c.With("only-one")
}

// TestRuntimeAndProcess: the Go and process families are there under the
// Prometheus client's names, with plausible values.
func TestRuntimeAndProcess(t *testing.T) {
	var r promtext.Registry
	r.Collect(promtext.GoRuntime)
	r.Collect(promtext.Process)
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(string(r.AppendText(nil))))
	if err != nil {
		t.Fatal(err)
	}
	positive := []string{"go_goroutines", "go_threads", "go_memstats_alloc_bytes", "go_memstats_sys_bytes",
		"process_resident_memory_bytes", "process_open_fds", "process_max_fds", "process_start_time_seconds"}
	for _, name := range positive {
		mf := mfs[name]
		if mf == nil {
			t.Errorf("no %s", name)
			continue
		}
		if v := mf.Metric[0].GetGauge().GetValue() + mf.Metric[0].GetCounter().GetValue(); v <= 0 {
			t.Errorf("%s = %v", name, v)
		}
	}
	if mfs["process_cpu_seconds_total"] == nil || mfs["go_gc_duration_seconds"] == nil {
		t.Error("no process_cpu_seconds_total or go_gc_duration_seconds")
	}
	if start := mfs["process_start_time_seconds"].Metric[0].GetGauge().GetValue(); start < 1.7e9 {
		t.Errorf("process_start_time_seconds %v", start)
	}
}
