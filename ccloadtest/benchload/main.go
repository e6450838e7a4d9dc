// Command benchload is ccload's load benchmark (`make bench-load`). In one
// invocation it starts the project's mock upstream in a process of its own,
// then drives the same load at it directly, through nginx as a plain
// keep-alive reverse proxy (when nginx is installed: the floor for one proxy
// hop) and through the real `ccload serve` binary with SQLite logging on
// disk, and prints one table with the ratios. Every response is verified;
// a wrong one counts as an error.
//
// Scenarios (docs/benchmarks.md says how to read the table):
//
//	json     closed loop, -c concurrent non-stream requests, ~1 KB JSON answer
//	open     open loop at -rate req/s, latency measured from the scheduled
//	         send time (no coordinated omission)
//	sse      closed loop, -c concurrent streams of 20 events, no delay
//	streams  -streams concurrent slow streams (200 events × 50 ms)
//	streams10k  -streams10k concurrent slower streams (20 events × 1 s)
//
// The gateway is restarted before each stream scenario, so its memory is
// that of a fresh process holding the streams.
//
// Each upstream mode (-upstream) gets its own mock, gateways and table:
// plain http, TLS offering h2 and http/1.1 (what providers offer), and TLS
// offering only http/1.1. The TLS mock's self-signed certificate is made
// at run time and trusted through SSL_CERT_FILE. On the TLS modes the
// agent, open and streams10k scenarios run only when -only names them.
// After each table come the project's goals with PASS or FAIL.
//
// Gateway CPU-ms per request comes from the utime+stime deltas of
// /proc/PID/stat over the measured interval (for nginx, master and workers);
// RSS is VmRSS, its peak while the streams are all open.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

type options struct {
	bin        string        // the ccload binary
	runs       int           // repetitions; each cell is the median
	duration   time.Duration // measured time of a closed/open loop
	warmup     time.Duration
	conc       int // closed-loop concurrency
	rate       int // open-loop request rate
	streams    int
	streams10k int
	only       string // comma-separated scenarios; "" = all
	targets    string // comma-separated targets; "" = all available
	upstreams  string // comma-separated upstream modes
	keep       bool   // keep the work directory
	pprof      string // write a CPU profile of ccload during this scenario
}

func main() {
	if len(os.Args) == 5 && os.Args[1] == "-serve-upstream" {
		mode, err := parseMode(os.Args[3])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		serveUpstream(os.Args[2], mode, os.Args[4])
		return
	}
	if len(os.Args) == 4 && os.Args[1] == "-serve-floor" {
		serveFloor(os.Args[2], os.Args[3])
		return
	}
	var o options
	flag.StringVar(&o.bin, "bin", "bin/ccload", "the ccload binary to measure")
	flag.IntVar(&o.runs, "runs", 1, "repetitions of every scenario; cells are medians")
	flag.DurationVar(&o.duration, "d", 5*time.Second, "measured duration of each loop")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured load before each loop")
	flag.IntVar(&o.conc, "c", 64, "closed-loop concurrency")
	flag.IntVar(&o.rate, "rate", 500, "open-loop requests per second")
	flag.IntVar(&o.streams, "streams", 1000, "concurrent slow streams (200 events × 50 ms)")
	flag.IntVar(&o.streams10k, "streams10k", 10000, "concurrent slower streams (20 events × 1 s); 0 skips")
	flag.StringVar(&o.only, "only", "", "comma-separated scenarios to run (json,agent,open,sse,streams,streams10k); empty = all")
	flag.StringVar(&o.targets, "targets", "", "comma-separated targets (direct,nginx,gofloor,ccload); empty = all available")
	flag.StringVar(&o.upstreams, "upstream", "plain,https-h2,https-h1", "comma-separated upstream modes: plain (http), https-h2 (TLS offering h2 and http/1.1), https-h1 (TLS offering http/1.1 only)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (configs, logs, database)")
	flag.StringVar(&o.pprof, "pprof", "", "scenario during which to save a 5 s CPU profile of ccload, or for a streams scenario its heap profile with all streams open (needs server.pprof)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "benchload:", err)
		os.Exit(1)
	}
}

func (o options) want(list, name string) bool {
	if list == "" {
		return true
	}
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == name {
			return true
		}
	}
	return false
}

func run(ctx context.Context, o options) error {
	raiseNoFile()
	o.streams, o.streams10k = streamsFit(o.streams), streamsFit(o.streams10k)
	work, err := os.MkdirTemp("", "benchload-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "work directory:", work)
	} else {
		defer os.RemoveAll(work)
	}

	var modes []upstreamMode
	for _, name := range strings.Split(o.upstreams, ",") {
		m, err := parseMode(strings.TrimSpace(name))
		if err != nil {
			return err
		}
		modes = append(modes, m)
	}
	// Every Go process of the run (this one, ccload, gofloor) trusts the
	// TLS mock's certificate through SSL_CERT_FILE, which replaces the
	// system roots; it is set before anything loads them.
	cert, err := writeCert(work)
	if err != nil {
		return err
	}
	if err := os.Setenv("SSL_CERT_FILE", cert); err != nil {
		return err
	}
	for i, m := range modes {
		if i > 0 {
			fmt.Println()
		}
		if err := runMode(ctx, o, work, m); err != nil {
			return err
		}
	}
	return nil
}

// runMode starts the mock upstream in one mode and the gateways in front
// of it, runs the scenarios and prints the mode's table and goal checks.
func runMode(ctx context.Context, o options, work string, mode upstreamMode) error {
	up, err := startUpstream(work, mode)
	if err != nil {
		return err
	}
	defer up.stop()
	targets := []*target{{name: "direct", addr: up.addr, tls: mode.tls()}}
	if o.want(o.targets, "nginx") {
		if ng, err := startNginx(work, mode, up.addr); err != nil {
			fmt.Fprintln(os.Stderr, "nginx not measured:", err)
		} else {
			defer ng.stop()
			targets = append(targets, ng)
		}
	}
	if o.want(o.targets, "gofloor") {
		fl, err := startFloor(work, mode, up.addr)
		if err != nil {
			return err
		}
		defer fl.stop()
		targets = append(targets, fl)
	}
	if o.want(o.targets, "ccload") {
		cc, err := startCcload(work, o.bin, mode, up.addr)
		if err != nil {
			return err
		}
		defer cc.stop()
		targets = append(targets, cc)
	}
	var tt []*target
	for _, t := range targets {
		if o.want(o.targets, t.name) {
			tt = append(tt, t)
		}
	}

	tab := newTable(tt)
	for _, sc := range scenarios(o) {
		if !o.want(o.only, sc.name) || (o.only == "" && sc.plainOnly && mode != modePlain) {
			continue
		}
		for i := 0; i < o.runs; i++ {
			for _, t := range tt {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if sc.gatewayOnly && t.proc == nil {
					continue
				}
				fmt.Fprintf(os.Stderr, "%s: %s / %s (run %d of %d)\n", mode, sc.name, t.name, i+1, o.runs)
				if sc.streams {
					if err := t.restart(); err != nil {
						return err
					}
				}
				var prof func() error
				t.plateau = nil
				if o.pprof == sc.name && t.name == "ccload" {
					if sc.streams {
						t.plateau = func() { t.heapProfile(work, mode) }
					} else {
						prof = t.profile(work, mode, 5*time.Second)
					}
				}
				res := sc.run(ctx, t)
				if prof != nil {
					if err := prof(); err != nil {
						fmt.Fprintln(os.Stderr, "profile:", err)
					}
				}
				tab.add(sc, t, res)
			}
		}
	}
	fmt.Printf("## upstream: %s (%s)\n\n", mode, mode.describe())
	tab.print(os.Stdout)
	fmt.Println()
	tab.printGoals(os.Stdout, mode)
	return nil
}

// streamsFit caps n at what a gateway can hold open: two sockets a stream
// (client side and upstream side) plus a margin for its files.
func streamsFit(n int) int {
	if fit := (noFile() - 100) / 2; n > fit {
		fmt.Fprintf(os.Stderr, "open-file limit %d (raising it needs CAP_SYS_RESOURCE): %d streams capped at %d\n", noFile(), n, fit)
		return fit
	}
	return n
}
