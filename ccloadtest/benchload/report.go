package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

var errOut io.Writer = os.Stderr

// table collects every run and prints medians with ratios.
type table struct {
	targets []*target
	order   []scenario
	runs    map[string]map[string][]result // scenario -> target -> runs
}

func newTable(tt []*target) *table {
	return &table{targets: tt, runs: map[string]map[string][]result{}}
}

func (t *table) add(sc scenario, tg *target, r result) {
	if t.runs[sc.name] == nil {
		t.runs[sc.name] = map[string][]result{}
		t.order = append(t.order, sc)
	}
	t.runs[sc.name][tg.name] = append(t.runs[sc.name][tg.name], r)
}

// metric is one row: how to read it from a result, and how to print it.
type metric struct {
	name string
	get  func(r result) float64
	unit string // printed after the number
	prec int
	// added: the row is the target's value minus direct's (latency a hop adds).
	added bool
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func metricsOf(sc scenario) []metric {
	lat := []metric{
		{name: "latency p50", get: func(r result) float64 { return ms(r.p50) }, unit: " ms", prec: 2},
		{name: "latency p90", get: func(r result) float64 { return ms(r.p90) }, unit: " ms", prec: 2},
		{name: "latency p99", get: func(r result) float64 { return ms(r.p99) }, unit: " ms", prec: 2},
	}
	cpu := metric{name: "gateway CPU-ms/req", get: func(r result) float64 { return ms(r.cpuPerReq) }, prec: 3}
	errs := metric{name: "errors", get: func(r result) float64 { return float64(r.errors) }}
	switch {
	case sc.streams:
		return []metric{
			{name: "streams completed", get: func(r result) float64 { return float64(r.done) }},
			errs,
			{name: "gateway RSS peak", get: func(r result) float64 { return float64(r.rss) / (1 << 20) }, unit: " MiB", prec: 1},
			{name: "memory per stream", get: func(r result) float64 { return float64(r.perStream) / 1024 }, unit: " KiB", prec: 1},
			{name: "RSS all open: anonymous", get: func(r result) float64 { return float64(r.plateau.anon) / (1 << 20) }, unit: " MiB", prec: 1},
			{name: "RSS all open: file pages", get: func(r result) float64 { return float64(r.plateau.file) / (1 << 20) }, unit: " MiB", prec: 1},
			{name: "gateway CPU-ms/stream", get: func(r result) float64 { return ms(r.cpuPerReq) }, prec: 3},
		}
	case sc.open:
		return append(lat,
			metric{name: "added latency p50", get: func(r result) float64 { return ms(r.p50) }, unit: " ms", prec: 2, added: true},
			metric{name: "added latency p99", get: func(r result) float64 { return ms(r.p99) }, unit: " ms", prec: 2, added: true},
			cpu, errs)
	default:
		return append([]metric{{name: "req/s", get: func(r result) float64 { return r.rate }}}, append(lat, cpu,
			metric{name: "gateway RSS", get: func(r result) float64 { return float64(r.rss) / (1 << 20) }, unit: " MiB", prec: 1},
			errs)...)
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func (t *table) print(w io.Writer) {
	var names []string
	for _, tg := range t.targets {
		names = append(names, tg.name)
	}
	has := func(n string) bool {
		for _, x := range names {
			if x == n {
				return true
			}
		}
		return false
	}
	hdr := "| scenario | metric | " + strings.Join(names, " | ") + " |"
	sep := "|---|---|" + strings.Repeat("---|", len(names))
	var ratios []string
	if has("ccload") && has("nginx") {
		ratios = append(ratios, "ccload/nginx")
	}
	if has("ccload") && has("gofloor") {
		ratios = append(ratios, "ccload/gofloor")
	}
	if has("ccload") && has("direct") {
		ratios = append(ratios, "ccload/direct")
	}
	for _, r := range ratios {
		hdr += " " + r + " |"
		sep += "---|"
	}
	fmt.Fprintln(w, hdr)
	fmt.Fprintln(w, sep)
	for _, sc := range t.order {
		runs := t.runs[sc.name]
		n := 0
		for _, rs := range runs {
			n = max(n, len(rs))
		}
		label := sc.label
		if n > 1 {
			label += fmt.Sprintf(" (median of %d)", n)
		}
		for _, m := range metricsOf(sc) {
			val := map[string]float64{}
			ok := map[string]bool{}
			for _, name := range names {
				rs := runs[name]
				if len(rs) == 0 {
					continue
				}
				var v []float64
				for _, r := range rs {
					v = append(v, m.get(r))
				}
				val[name], ok[name] = median(v), true
			}
			if m.added {
				if !ok["direct"] {
					continue
				}
				base := val["direct"]
				for name := range val {
					val[name] -= base
				}
				delete(ok, "direct")
			}
			row := "| " + label + " | " + m.name + " |"
			label = ""
			for _, name := range names {
				if !ok[name] || (name == "direct" && strings.HasPrefix(m.name, "gateway")) {
					row += " – |"
					continue
				}
				row += fmt.Sprintf(" %.*f%s |", m.prec, val[name], m.unit)
			}
			for _, r := range ratios {
				other := strings.TrimPrefix(r, "ccload/")
				if !ok["ccload"] || !ok[other] || val[other] == 0 || m.name == "errors" {
					row += " – |"
					continue
				}
				row += fmt.Sprintf(" %.2f× |", val["ccload"]/val[other])
			}
			fmt.Fprintln(w, row)
		}
	}
}
