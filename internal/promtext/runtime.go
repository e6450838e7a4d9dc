package promtext

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

// processStart stands in for the process's start time where /proc does not
// give it; package initialisation runs within milliseconds of it.
var processStart = time.Now()

// GoRuntime emits the Go runtime's metrics under the names the Prometheus
// Go client uses (go_goroutines, go_memstats_*, go_gc_duration_seconds …),
// so dashboards made for any Go service read them.
func GoRuntime(e *Emitter) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	e.Gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
	e.Gauge("go_threads", "Number of OS threads created.", float64(pprof.Lookup("threadcreate").Count()))
	e.Gauge("go_info", "Information about the Go environment.", 1, "version", runtime.Version())
	e.Gauge("go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use.", float64(ms.HeapAlloc))
	e.Counter("go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already.", float64(ms.TotalAlloc))
	e.Gauge("go_memstats_sys_bytes", "Number of bytes obtained from system.", float64(ms.Sys))
	e.Counter("go_memstats_mallocs_total", "Total number of heap objects allocated.", float64(ms.Mallocs))
	e.Counter("go_memstats_frees_total", "Total number of heap objects frees.", float64(ms.Frees))
	e.Gauge("go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use.", float64(ms.HeapAlloc))
	e.Gauge("go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system.", float64(ms.HeapSys))
	e.Gauge("go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used.", float64(ms.HeapIdle))
	e.Gauge("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use.", float64(ms.HeapInuse))
	e.Gauge("go_memstats_heap_released_bytes", "Number of heap bytes released to OS.", float64(ms.HeapReleased))
	e.Gauge("go_memstats_heap_objects", "Number of currently allocated objects.", float64(ms.HeapObjects))
	e.Gauge("go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments.", float64(ms.StackInuse))
	e.Gauge("go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place.", float64(ms.NextGC))
	e.Gauge("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", float64(ms.LastGC)/1e9)

	gc := debug.GCStats{PauseQuantiles: make([]time.Duration, 5)}
	debug.ReadGCStats(&gc)
	var qs [][2]float64
	if gc.NumGC > 0 {
		for i, q := range []float64{0, 0.25, 0.5, 0.75, 1} {
			qs = append(qs, [2]float64{q, gc.PauseQuantiles[i].Seconds()})
		}
	}
	e.Summary("go_gc_duration_seconds", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.",
		qs, gc.PauseTotal.Seconds(), uint64(gc.NumGC))
}

// Process emits the process's CPU time, memory, open files and start time
// under the Prometheus client's process_* names. On a system without /proc
// only the start time and, where there is one, the open-file limit are
// there.
func Process(e *Emitter) {
	start := float64(processStart.UnixMilli()) / 1000
	if st, ok := readStat(); ok {
		e.Counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", st.cpu)
		e.Gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", st.vsize)
		e.Gauge("process_resident_memory_bytes", "Resident memory size in bytes.", st.rss)
		if st.start > 0 {
			start = st.start
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		e.Gauge("process_open_fds", "Number of open file descriptors.", float64(len(fds)))
	}
	if n, ok := maxFDs(); ok {
		e.Gauge("process_max_fds", "Maximum number of open file descriptors.", float64(n))
	}
	e.Gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", start)
}

type procStat struct{ cpu, vsize, rss, start float64 }

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on Linux.
const clockTicks = 100

// readStat reads /proc/self/stat (proc(5)): utime and stime (fields 14,
// 15), starttime (22), vsize (23) and rss in pages (24); the boot time
// that starttime counts from is btime in /proc/stat.
func readStat() (procStat, bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return procStat{}, false
	}
	f := strings.Fields(s[i+2:]) // f[0] is field 3 (state)
	if len(f) < 22 {
		return procStat{}, false
	}
	num := func(k int) float64 { v, _ := strconv.ParseFloat(f[k-3], 64); return v }
	st := procStat{
		cpu:   (num(14) + num(15)) / clockTicks,
		vsize: num(23),
		rss:   num(24) * float64(os.Getpagesize()),
	}
	if boot, ok := bootTime(); ok {
		st.start = boot + num(22)/clockTicks
	}
	return st, true
}

func bootTime() (float64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return n, err == nil
		}
	}
	return 0, false
}
