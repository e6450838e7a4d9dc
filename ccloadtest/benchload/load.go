package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// result is one scenario run against one target.
type result struct {
	rate      float64       // requests (or streams) completed per second
	p50, p90  time.Duration // latency of a whole request or stream
	p99       time.Duration
	cpuPerReq time.Duration // gateway CPU per request (0 for direct)
	rss       int64         // gateway RSS at the end, or its peak with streams open
	perStream int64         // (peak RSS - RSS before) / streams
	plateau   resident      // memory once all streams are open
	errors    int
	done      int
}

// scenario is one row group of the table.
type scenario struct {
	name, label string
	gatewayOnly bool // meaningless without a gateway (memory per stream)
	// plainOnly: run on the TLS upstream modes only when -only names it,
	// to keep a default run's length reasonable.
	plainOnly bool
	open      bool // latency is reported as added to direct's
	streams   bool // memory per stream is reported
	run       func(ctx context.Context, t *target) result
}

func scenarios(o options) []scenario {
	return []scenario{
		{name: "json", label: fmt.Sprintf("non-stream ~1 KB JSON, %d concurrent", o.conc),
			run: func(ctx context.Context, t *target) result {
				return closedLoop(ctx, t, shapeJSON, false, nil, o.conc, o.warmup, o.duration)
			}},
		{name: "agent", plainOnly: true, label: fmt.Sprintf("non-stream ~%d KB agent request, %d concurrent", len(agentBody(shapeJSON.model))>>10, o.conc),
			run: func(ctx context.Context, t *target) result {
				return closedLoop(ctx, t, shapeJSON, false, agentBody(shapeJSON.model), o.conc, o.warmup, o.duration)
			}},
		{name: "open", plainOnly: true, label: fmt.Sprintf("open loop %d req/s, non-stream", o.rate), open: true,
			run: func(ctx context.Context, t *target) result {
				return openLoop(ctx, t, shapeJSON, o.rate, o.warmup, o.duration)
			}},
		{name: "sse", label: fmt.Sprintf("SSE 20 events, %d concurrent", o.conc),
			run: func(ctx context.Context, t *target) result {
				return closedLoop(ctx, t, shapeSSE, true, nil, o.conc, o.warmup, o.duration)
			}},
		{name: "streams", label: fmt.Sprintf("%d concurrent SSE, 200 events x 50 ms", o.streams), streams: true, gatewayOnly: true,
			run: func(ctx context.Context, t *target) result {
				return slowStreams(ctx, t, shapeSlow, o.streams)
			}},
		{name: "streams10k", plainOnly: true, label: fmt.Sprintf("%d concurrent SSE, 20 events x 1 s", o.streams10k), streams: true, gatewayOnly: true,
			run: func(ctx context.Context, t *target) result {
				if o.streams10k == 0 {
					return result{}
				}
				return slowStreams(ctx, t, shapeSlow1s, o.streams10k)
			}},
	}
}

// caller sends benchmark requests to one target and checks the answers.
type caller struct {
	hc     *fasthttp.HostClient
	uri    string
	shape  shape
	stream bool
	body   []byte
	want   []byte // the whole text (non-stream) or the last word (stream)
}

func newCaller(t *target, s shape, stream bool, conns int) *caller {
	body := fmt.Sprintf(`{"model":%q,"max_tokens":1024,"stream":%t,"messages":[{"role":"user","content":"Say the benchmark words."}]}`, s.model, stream)
	text := s.text()
	want := []byte(text)
	if stream {
		want = []byte(text[len(text)-6:])
	}
	return &caller{
		hc: &fasthttp.HostClient{
			Addr: t.addr, IsTLS: t.tls, MaxConns: conns, StreamResponseBody: stream,
			DialTimeout: func(addr string, _ time.Duration) (net.Conn, error) {
				// Thousands of streams open at once can overflow a listen
				// backlog; SYN retries then take seconds, not an error.
				return net.DialTimeout("tcp", addr, 30*time.Second)
			},
			ReadTimeout: 2 * time.Minute, WriteTimeout: 10 * time.Second,
			MaxIdemponentCallAttempts: 1, MaxConnWaitTimeout: time.Minute,
		},
		uri: scheme(t.tls) + "://" + t.addr + "/v1/messages", shape: s, stream: stream, body: []byte(body), want: want,
	}
}

func scheme(tls bool) string {
	if tls {
		return "https"
	}
	return "http"
}

var textDelta = []byte(`"text_delta"`)

// call sends one request and verifies its answer; started, when set, is
// called once the first bytes of a stream arrived.
func (c *caller) call(buf *bytes.Buffer, started func()) error {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(c.uri)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("x-api-key", benchToken)
	req.SetBodyRaw(c.body)
	if err := c.hc.Do(req, resp); err != nil {
		return err
	}
	if resp.StatusCode() != fasthttp.StatusOK {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode(), resp.Body())
	}
	if !c.stream {
		if !bytes.Contains(resp.Body(), c.want) {
			return errors.New("answer lacks the expected text")
		}
		return nil
	}
	buf.Reset()
	if rd := resp.BodyStream(); rd != nil {
		chunk := make([]byte, 4096)
		for {
			n, err := rd.Read(chunk)
			if n > 0 && started != nil {
				started()
				started = nil
			}
			buf.Write(chunk[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
		}
	} else {
		buf.Write(resp.Body())
	}
	b := buf.Bytes()
	if got := bytes.Count(b, textDelta); got != c.shape.words {
		return fmt.Errorf("stream had %d text deltas, want %d", got, c.shape.words)
	}
	if !bytes.Contains(b, c.want) || !bytes.Contains(b, []byte("message_stop")) {
		return errors.New("stream lacks its last word or message_stop")
	}
	return nil
}

// sample is one finished request.
type sample struct {
	end time.Time
	lat time.Duration
	err bool
}

// closedLoop runs conc workers back to back; requests that end inside the
// measured window count. body, when set, replaces the short request
// newCaller sends.
func closedLoop(ctx context.Context, t *target, s shape, stream bool, body []byte, conc int, warmup, dur time.Duration) result {
	c := newCaller(t, s, stream, conc)
	if body != nil {
		c.body = body
	}
	var stop atomic.Bool
	samples := make([][]sample, conc)
	var wg sync.WaitGroup
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			for !stop.Load() {
				t0 := time.Now()
				err := c.call(&buf, nil)
				samples[w] = append(samples[w], sample{end: time.Now(), lat: time.Since(t0), err: err != nil})
				if err != nil {
					logFirst(err)
				}
			}
		}()
	}
	r := measure(ctx, t, warmup, dur, func(from, to time.Time) ([]sample, int) {
		stop.Store(true)
		wg.Wait()
		return window(samples, from, to)
	})
	c.hc.CloseIdleConnections()
	return r
}

// openLoop sends rate requests per second on a fixed schedule whatever the
// answers do; latency runs from the scheduled send time.
func openLoop(ctx context.Context, t *target, s shape, rate int, warmup, dur time.Duration) result {
	c := newCaller(t, s, false, 1024)
	interval := time.Second / time.Duration(rate)
	var mu sync.Mutex
	var all []sample
	var stop atomic.Bool
	var wg sync.WaitGroup
	go func() {
		t0 := time.Now()
		for i := 0; !stop.Load(); i++ {
			at := t0.Add(time.Duration(i) * interval)
			time.Sleep(time.Until(at)) // the schedule itself: this is what an open loop is
			wg.Add(1)
			go func() {
				defer wg.Done()
				var buf bytes.Buffer
				err := c.call(&buf, nil)
				end := time.Now()
				if err != nil {
					logFirst(err)
				}
				mu.Lock()
				all = append(all, sample{end: end, lat: end.Sub(at), err: err != nil})
				mu.Unlock()
			}()
		}
	}()
	r := measure(ctx, t, warmup, dur, func(from, to time.Time) ([]sample, int) {
		stop.Store(true)
		time.Sleep(10 * time.Millisecond) // let the scheduler see stop before waiting
		wg.Wait()
		return window([][]sample{all}, from, to)
	})
	c.hc.CloseIdleConnections()
	return r
}

// measure waits out the warm-up, reads the gateway's CPU across the
// measured window, then collects its samples.
func measure(ctx context.Context, t *target, warmup, dur time.Duration, collect func(from, to time.Time) ([]sample, int)) result {
	sleepCtx(ctx, warmup)
	var cpu0 time.Duration
	if t.proc != nil {
		cpu0 = t.proc.cpu()
	}
	from := time.Now()
	sleepCtx(ctx, dur)
	to := time.Now()
	var r result
	var cpu time.Duration
	if t.proc != nil {
		cpu = t.proc.cpu() - cpu0
		r.rss = t.proc.rss()
	}
	ok, errs := collect(from, to)
	r.errors = errs
	r.done = len(ok)
	r.rate = float64(len(ok)) / to.Sub(from).Seconds()
	r.p50, r.p90, r.p99 = percentiles(ok)
	if r.done > 0 {
		r.cpuPerReq = cpu / time.Duration(r.done)
	}
	return r
}

func window(samples [][]sample, from, to time.Time) (ok []sample, errs int) {
	for _, ss := range samples {
		for _, s := range ss {
			if s.end.Before(from) || s.end.After(to) {
				continue
			}
			if s.err {
				errs++
				continue
			}
			ok = append(ok, s)
		}
	}
	return ok, errs
}

// slowStreams holds n streams open at once (opened at up to 1,000 a
// second) and reports the gateway's memory while they are all open.
func slowStreams(ctx context.Context, t *target, s shape, n int) result {
	c := newCaller(t, s, true, n+16)
	before := t.proc.rss()
	cpu0 := t.proc.cpu()
	var open atomic.Int64
	allOpen := make(chan struct{})
	var peak atomic.Int64
	samples := make([]sample, n)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range n {
		if i%100 == 0 {
			time.Sleep(time.Until(t0.Add(time.Duration(i) * time.Second / 1000))) // ramp
			if ctx.Err() != nil {
				break
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			start := time.Now()
			err := c.call(&buf, func() {
				if open.Add(1) == int64(n) {
					close(allOpen)
				}
			})
			if err != nil {
				logFirst(err)
			}
			samples[i] = sample{end: time.Now(), lat: time.Since(start), err: err != nil}
		}()
	}
	// Peak RSS while the streams are open: sample until the first ends.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var plateau resident
loop:
	for {
		select {
		case <-tick.C:
			if v := t.proc.rss(); v > peak.Load() {
				peak.Store(v)
			}
		case <-allOpen:
			allOpen = nil
			plateau = t.proc.memory()
			if t.plateau != nil {
				t.plateau()
			}
		case <-done:
			break loop
		}
	}
	to := time.Now()
	var r result
	ok, errs := window([][]sample{samples}, t0, to)
	r.errors = errs + (n - len(ok) - errs)
	r.done = len(ok)
	r.rate = float64(len(ok)) / to.Sub(t0).Seconds()
	r.p50, r.p90, r.p99 = percentiles(ok)
	r.rss = max(peak.Load(), plateau.rss)
	r.plateau = plateau
	r.perStream = (r.rss - before) / int64(n)
	if r.done > 0 {
		r.cpuPerReq = (t.proc.cpu() - cpu0) / time.Duration(r.done)
	}
	c.hc.CloseIdleConnections()
	return r
}

func percentiles(ss []sample) (p50, p90, p99 time.Duration) {
	if len(ss) == 0 {
		return 0, 0, 0
	}
	l := make([]time.Duration, len(ss))
	for i, s := range ss {
		l[i] = s.lat
	}
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	at := func(q float64) time.Duration { return l[min(len(l)-1, int(q*float64(len(l))))] }
	return at(0.50), at(0.90), at(0.99)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

var firstErr sync.Once

// logFirst prints the first failed request, so a broken run says why.
func logFirst(err error) {
	firstErr.Do(func() { fmt.Fprintln(errOut, "first failed request:", err) })
}
