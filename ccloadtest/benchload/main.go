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
	keep       bool   // keep the work directory
	pprof      string // write a CPU profile of ccload during this scenario
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-serve-upstream" {
		serveUpstream(os.Args[2])
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

	up, err := startUpstream(work)
	if err != nil {
		return err
	}
	defer up.stop()
	targets := []*target{{name: "direct", addr: up.addr}}
	if o.want(o.targets, "nginx") {
		if ng, err := startNginx(work, up.addr); err != nil {
			fmt.Fprintln(os.Stderr, "nginx not measured:", err)
		} else {
			defer ng.stop()
			targets = append(targets, ng)
		}
	}
	if o.want(o.targets, "gofloor") {
		fl, err := startFloor(work, up.addr)
		if err != nil {
			return err
		}
		defer fl.stop()
		targets = append(targets, fl)
	}
	if o.want(o.targets, "ccload") {
		cc, err := startCcload(work, o.bin, up.addr)
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
		if !o.want(o.only, sc.name) {
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
				fmt.Fprintf(os.Stderr, "%s / %s (run %d of %d)\n", sc.name, t.name, i+1, o.runs)
				if sc.streams {
					if err := t.restart(); err != nil {
						return err
					}
				}
				var prof func() error
				t.plateau = nil
				if o.pprof == sc.name && t.name == "ccload" {
					if sc.streams {
						t.plateau = func() { t.heapProfile(work) }
					} else {
						prof = t.profile(work, 5*time.Second)
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
	tab.print(os.Stdout)
	return nil
}

// raiseNoFile lifts the open-file limit as far as the hard limit (or, as
// root, further): 10,000 streams through a gateway hold four sockets each
// across the three processes. Children inherit it.
func raiseNoFile() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return
	}
	want := uint64(200000)
	if l.Max < want {
		l2 := syscall.Rlimit{Cur: want, Max: want}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l2) == nil {
			return
		}
	}
	l.Cur = min(want, l.Max)
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l) // best effort: errors show as failed streams
}

// noFile is the open-file limit in force.
func noFile() int {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return 1024
	}
	return int(l.Cur)
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
