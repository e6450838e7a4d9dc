package main

import (
	"fmt"
	"io"
)

// goal is one check of ccload against the project's targets, read from
// the medians of a mode's table.
type goal struct {
	name     string
	scenario string
	// ratio: ccload's value over nginx's must be within limit; else
	// ccload's own value must be.
	ratio  bool
	get    func(r result) float64
	limit  float64
	atMost bool // the value must be <= limit (else >= limit)
	unit   string
	// zeroErrors: ccload must also have had no errors.
	zeroErrors bool
}

func goalsOf(mode upstreamMode) []goal {
	rate := func(r result) float64 { return r.rate }
	gs := []goal{
		{name: "non-stream req/s vs nginx", scenario: "json", ratio: true, get: rate, limit: 0.6},
	}
	if mode.tls() {
		gs = append(gs, goal{name: "non-stream CPU per request vs nginx", scenario: "json", ratio: true,
			get: func(r result) float64 { return ms(r.cpuPerReq) }, limit: 2.5, atMost: true})
	}
	rss := func(r result) float64 { return float64(r.rss) / (1 << 20) }
	gs = append(gs, goal{name: "SSE streams/s vs nginx", scenario: "sse", ratio: true, get: rate, limit: 0.6})
	if mode.tls() {
		// The MiB limits below are the plain upstream's. Over TLS every
		// open stream also holds its connection's crypto/tls state
		// (record buffers, AEAD state, the peer's certificates: about 20
		// KiB a stream after the collector's headroom), which no gateway
		// avoids; the floor there is nginx holding the same streams.
		return append(gs, goal{name: "slow streams open: RSS peak vs nginx", scenario: "streams", ratio: true, get: rss, limit: 1, atMost: true, zeroErrors: true})
	}
	return append(gs,
		goal{name: "slow streams open: RSS peak", scenario: "streams", get: rss, limit: 64, atMost: true, unit: " MiB", zeroErrors: true},
		goal{name: "10k-scale streams open: RSS peak", scenario: "streams10k", get: rss, limit: 500, atMost: true, unit: " MiB", zeroErrors: true},
	)
}

// value is the median of get over a target's runs of a scenario.
func (t *table) value(scenario, target string, get func(r result) float64) (float64, bool) {
	rs := t.runs[scenario][target]
	if len(rs) == 0 {
		return 0, false
	}
	var v []float64
	for _, r := range rs {
		v = append(v, get(r))
	}
	return median(v), true
}

// printGoals prints each goal of the mode whose scenario ran, with PASS
// or FAIL.
func (t *table) printGoals(w io.Writer, mode upstreamMode) {
	fmt.Fprintf(w, "| goal (%s) | limit | ccload | result |\n|---|---|---|---|\n", mode)
	for _, g := range goalsOf(mode) {
		cc, ok := t.value(g.scenario, "ccload", g.get)
		if !ok {
			continue
		}
		cmp := "≥"
		if g.atMost {
			cmp = "≤"
		}
		limit := fmt.Sprintf("%s %g%s", cmp, g.limit, g.unit)
		v, shown := cc, fmt.Sprintf("%.1f%s", cc, g.unit)
		if g.ratio {
			limit = fmt.Sprintf("%s %g×", cmp, g.limit)
			ng, ok := t.value(g.scenario, "nginx", g.get)
			if !ok || ng == 0 {
				fmt.Fprintf(w, "| %s | %s | – | n/a (no nginx) |\n", g.name, limit)
				continue
			}
			v, shown = cc/ng, fmt.Sprintf("%.2f×", cc/ng)
		}
		pass := v >= g.limit
		if g.atMost {
			pass = v <= g.limit
		}
		if g.zeroErrors {
			errs, _ := t.value(g.scenario, "ccload", func(r result) float64 { return float64(r.errors) })
			n, _ := t.value(g.scenario, "ccload", func(r result) float64 { return float64(r.done) })
			shown += fmt.Sprintf(", %.0f streams, %.0f errors", n, errs)
			pass = pass && errs == 0
		}
		res := "PASS"
		if !pass {
			res = "FAIL"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", g.name, limit, shown, res)
	}
}
