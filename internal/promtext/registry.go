// Package promtext serves metrics in the Prometheus text exposition format
// (version 0.0.4): counters and histograms kept in memory, and samples read
// at scrape time. It replaces the Prometheus client library, whose
// dependencies (protobuf among them) were 2 MiB of ccload's binary and
// 3–4 MiB of its resident memory, for the few metric types ccload exports.
package promtext

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// ContentType is the Content-Type of AppendText's output.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Registry holds metric families and writes them.
type Registry struct {
	mu         sync.Mutex
	vecs       []family
	collectors []func(*Emitter)
}

type family interface {
	emit(e *Emitter)
}

// Collect adds a function that emits samples at each scrape: gauges and
// counters whose values live elsewhere.
func (r *Registry) Collect(f func(*Emitter)) {
	r.mu.Lock()
	r.collectors = append(r.collectors, f)
	r.mu.Unlock()
}

// AppendText appends every family in the text format, families sorted by
// name and series by label values.
func (r *Registry) AppendText(dst []byte) []byte {
	r.mu.Lock()
	vecs, collectors := slices.Clone(r.vecs), slices.Clone(r.collectors)
	r.mu.Unlock()
	e := &Emitter{byName: map[string]*sampleFamily{}}
	for _, v := range vecs {
		v.emit(e)
	}
	for _, c := range collectors {
		c(e)
	}
	return e.appendText(dst)
}

func (r *Registry) add(f family) {
	r.mu.Lock()
	r.vecs = append(r.vecs, f)
	r.mu.Unlock()
}

// vec keeps a family's children by their label values.
type vec[T any] struct {
	name, help string
	labels     []string
	make       func() *T

	// read is a copy of children that lookups use without a lock: a
	// read-write lock's reader count is one cache line every request on
	// every core writes, several times per request (perf). It
	// is refreshed from children once as many lookups have missed it as
	// children holds, so that a new series costs its copy only amortized.
	read atomic.Pointer[map[string]*child[T]]

	mu       sync.Mutex
	children map[string]*child[T] // every child; under mu
	misses   int                  // lookups read did not answer since it was copied; under mu
}

type child[T any] struct {
	values []string
	m      *T
}

// with returns the child for values, making it on first use. Finding a
// child that exists allocates nothing (the key is built on the stack and
// only copied when a child is added), so callers on a hot path need no
// cache of their own.
func (v *vec[T]) with(values []string) *T {
	if len(values) != len(v.labels) {
		panic("promtext: " + v.name + " takes " + strconv.Itoa(len(v.labels)) + " label values, got " + strconv.Itoa(len(values)))
	}
	var buf [256]byte
	key := buf[:0]
	for _, s := range values {
		key = append(append(key, s...), 0xff) // 0xff is never in UTF-8 text
	}
	if read := v.read.Load(); read != nil {
		if c := (*read)[string(key)]; c != nil {
			return c.m
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	c := v.children[string(key)]
	if c == nil {
		c = &child[T]{values: slices.Clone(values), m: v.make()}
		v.children[string(key)] = c
	}
	if v.misses++; v.misses >= len(v.children) {
		read := maps.Clone(v.children)
		v.read.Store(&read)
		v.misses = 0
	}
	return c.m
}

// each calls f for every child, in no order.
func (v *vec[T]) each(f func(labels []string, m *T)) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, c := range v.children {
		f(c.values, c.m)
	}
}

// Pairs interleaves label names and values into the labels argument of
// Emitter's methods.
func Pairs(names, values []string) []string {
	out := make([]string, 0, 2*len(names))
	for i, n := range names {
		out = append(out, n, values[i])
	}
	return out
}

// Counter is a value that only goes up.
type Counter struct{ bits atomic.Uint64 }

// Add adds v, which must not be negative.
func (c *Counter) Add(v float64) {
	if v < 0 {
		return // a counter never goes down; a negative add is a caller's bug
	}
	addFloat(&c.bits, v)
}

// Inc adds 1.
func (c *Counter) Inc() { c.Add(1) }

// Value is the counter's current value.
func (c *Counter) Value() float64 { return math.Float64frombits(c.bits.Load()) }

func addFloat(bits *atomic.Uint64, v float64) {
	for {
		old := bits.Load()
		if bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// CounterVec is a counter family with labels.
type CounterVec struct{ v vec[Counter] }

// CounterVec registers a counter family.
func (r *Registry) CounterVec(name, help string, labels ...string) *CounterVec {
	cv := &CounterVec{v: vec[Counter]{name: name, help: help, labels: labels,
		make: func() *Counter { return new(Counter) }, children: map[string]*child[Counter]{}}}
	r.add(cv)
	return cv
}

// With returns the counter for the label values, in the order of the
// family's labels.
func (cv *CounterVec) With(values ...string) *Counter { return cv.v.with(values) }

func (cv *CounterVec) emit(e *Emitter) {
	f := e.family(cv.v.name, cv.v.help, "counter")
	cv.v.each(func(values []string, c *Counter) {
		f.add(cv.v.name, Pairs(cv.v.labels, values), c.Value())
	})
}

// Histogram counts observations into buckets.
type Histogram struct {
	upper  []float64       // bucket upper bounds, ascending, +Inf not included
	counts []atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	sum    atomic.Uint64
}

// Observe records one value.
func (h *Histogram) Observe(v float64) {
	i, _ := slices.BinarySearch(h.upper, v) // first bound >= v; len(upper) is +Inf
	h.counts[i].Add(1)
	addFloat(&h.sum, v)
}

// HistogramVec is a histogram family with labels (none is fine).
type HistogramVec struct {
	v      vec[Histogram]
	upper  []float64
	bounds []string // upper as label values, "+Inf" last
}

// HistogramVec registers a histogram family with the given bucket upper
// bounds, ascending.
func (r *Registry) HistogramVec(name, help string, buckets []float64, labels ...string) *HistogramVec {
	upper := slices.Clone(buckets)
	if !slices.IsSorted(upper) {
		panic("promtext: " + name + ": buckets not ascending")
	}
	hv := &HistogramVec{upper: upper}
	for _, b := range upper {
		hv.bounds = append(hv.bounds, formatFloat(b))
	}
	hv.bounds = append(hv.bounds, "+Inf")
	hv.v = vec[Histogram]{name: name, help: help, labels: labels, children: map[string]*child[Histogram]{},
		make: func() *Histogram {
			return &Histogram{upper: upper, counts: make([]atomic.Uint64, len(upper)+1)}
		}}
	r.add(hv)
	return hv
}

// With returns the histogram for the label values.
func (hv *HistogramVec) With(values ...string) *Histogram { return hv.v.with(values) }

func (hv *HistogramVec) emit(e *Emitter) {
	f := e.family(hv.v.name, hv.v.help, "histogram")
	hv.v.each(func(values []string, h *Histogram) {
		labels := Pairs(hv.v.labels, values)
		var cum uint64
		for i := range h.counts {
			cum += h.counts[i].Load()
			f.add(hv.v.name+"_bucket", append(slices.Clip(labels), "le", hv.bounds[i]), float64(cum))
		}
		// _count is the +Inf bucket, so a scrape never shows them apart
		// even while observations land.
		f.add(hv.v.name+"_sum", labels, math.Float64frombits(h.sum.Load()))
		f.add(hv.v.name+"_count", labels, float64(cum))
	})
}

// Emitter gathers the samples of one scrape.
type Emitter struct {
	byName map[string]*sampleFamily
}

type sampleFamily struct {
	name, help, typ string
	samples         []sample
}

type sample struct {
	name   string
	labels []string // name, value, name, value…
	value  float64
}

func (e *Emitter) family(name, help, typ string) *sampleFamily {
	f := e.byName[name]
	if f == nil {
		f = &sampleFamily{name: name, help: help, typ: typ}
		e.byName[name] = f
	}
	return f
}

func (f *sampleFamily) add(name string, labels []string, v float64) {
	f.samples = append(f.samples, sample{name: name, labels: labels, value: v})
}

// Gauge emits one gauge sample; labels are name, value pairs. Samples of
// one name form one family.
func (e *Emitter) Gauge(name, help string, v float64, labels ...string) {
	e.family(name, help, "gauge").add(name, labels, v)
}

// Counter emits one counter sample read at scrape time.
func (e *Emitter) Counter(name, help string, v float64, labels ...string) {
	e.family(name, help, "counter").add(name, labels, v)
}

// Summary emits a summary without labels: its quantiles (quantile, value
// pairs), sum and count.
func (e *Emitter) Summary(name, help string, quantiles [][2]float64, sum float64, count uint64) {
	f := e.family(name, help, "summary")
	for _, q := range quantiles {
		f.add(name, []string{"quantile", formatFloat(q[0])}, q[1])
	}
	f.add(name+"_sum", nil, sum)
	f.add(name+"_count", nil, float64(count))
}

func (e *Emitter) appendText(b []byte) []byte {
	fams := make([]*sampleFamily, 0, len(e.byName))
	for _, f := range e.byName {
		fams = append(fams, f)
	}
	slices.SortFunc(fams, func(a, b *sampleFamily) int { return cmp.Compare(a.name, b.name) })
	for _, f := range fams {
		b = append(b, "# HELP "...)
		b = append(b, f.name...)
		b = append(b, ' ')
		b = appendEscaped(b, f.help, false)
		b = append(b, "\n# TYPE "...)
		b = append(b, f.name...)
		b = append(b, ' ')
		b = append(b, f.typ...)
		b = append(b, '\n')
		// Series in label order; the samples of one series (a histogram's
		// buckets, sum, count) keep the order they were emitted in.
		slices.SortStableFunc(f.samples, func(x, y sample) int { return compareSeries(x.labels, y.labels) })
		for _, s := range f.samples {
			b = append(b, s.name...)
			if len(s.labels) > 0 {
				b = append(b, '{')
				for i := 0; i+1 < len(s.labels); i += 2 {
					if i > 0 {
						b = append(b, ',')
					}
					b = append(b, s.labels[i]...)
					b = append(b, `="`...)
					b = appendEscaped(b, s.labels[i+1], true)
					b = append(b, '"')
				}
				b = append(b, '}')
			}
			b = append(b, ' ')
			b = append(b, formatFloat(s.value)...)
			b = append(b, '\n')
		}
	}
	return b
}

// compareSeries orders samples by their label values, ignoring "le" and
// "quantile", which tell the samples of one series apart.
func compareSeries(x, y []string) int {
	for i, j := 0, 0; ; i, j = i+2, j+2 {
		for i+1 < len(x) && (x[i] == "le" || x[i] == "quantile") {
			i += 2
		}
		for j+1 < len(y) && (y[j] == "le" || y[j] == "quantile") {
			j += 2
		}
		switch {
		case i+1 >= len(x) && j+1 >= len(y):
			return 0
		case i+1 >= len(x):
			return -1
		case j+1 >= len(y):
			return 1
		}
		if c := cmp.Compare(x[i+1], y[j+1]); c != 0 {
			return c
		}
	}
}

// appendEscaped escapes a HELP text (backslash, newline) or a label value
// (also the double quote), as the format requires.
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
