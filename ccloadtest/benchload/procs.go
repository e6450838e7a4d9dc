package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// target is one address the load is driven at: the upstream itself, or a
// gateway in front of it whose processes are measured.
type target struct {
	name string
	addr string
	tls  bool  // the load client speaks TLS to it (direct to the TLS mock)
	proc *proc // nil for direct: nothing between the client and the mock
	// adminPassword reaches ccload's pprof endpoint (-pprof).
	adminPassword string
	// launch starts the gateway process; restart uses it for a fresh one.
	launch func() (*proc, error)
	// plateau, when set, runs once while all slow streams are open
	// (-pprof on a streams scenario saves a heap profile there).
	plateau func()
}

// restart replaces the gateway process with a fresh one, so memory is
// measured from a clean start rather than after earlier scenarios grew
// the heap.
func (t *target) restart() error {
	if t.launch == nil {
		return nil
	}
	t.proc.stop()
	p, err := t.launch()
	if err != nil {
		return err
	}
	t.proc = p
	p.settle()
	return nil
}

// settle waits until the process's RSS stops moving (three samples, each
// 300 ms after the last, within 1% of each other; at most 30 s): ccload warms its dashboard cache from
// the database at start, in the background, and on the database earlier
// scenarios filled that takes a few seconds and tens of MiB. Counted as
// memory per stream, it made the stream scenarios of a full run read 2-3
// times what a fresh start shows.
func (p *proc) settle() {
	deadline := time.Now().Add(30 * time.Second)
	prev, still := p.rss(), 0
	for still < 2 && time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
		cur := p.rss()
		if d := cur - prev; d >= -prev/100 && d <= prev/100 {
			still++
		} else {
			still = 0
		}
		prev = cur
	}
}

// proc is a started child process.
type proc struct {
	cmd *exec.Cmd
	log *os.File
}

// pids are the process and its direct children (nginx workers).
func (p *proc) pids() []int {
	pid := p.cmd.Process.Pid
	out := []int{pid}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err == nil {
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// cpu is the user+system CPU time of the process and its children so far.
func (p *proc) cpu() time.Duration {
	var ticks int64
	for _, pid := range p.pids() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command name: state is field 3,
		// utime 14 and stime 15 (proc(5)).
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + st
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// rss is the resident memory of the process and its children, in bytes.
func (p *proc) rss() int64 { return p.memory().rss }

// resident is VmRSS and its two parts: anonymous memory (heap, stacks) and
// file pages (mostly the executable's code and tables, shared with the
// page cache and dropped first under memory pressure), in bytes.
type resident struct{ rss, anon, file int64 }

// memory is the resident memory of the process and its children.
func (p *proc) memory() resident {
	var m resident
	for _, pid := range p.pids() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			name, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			switch name {
			case "VmRSS":
				m.rss += n << 10
			case "RssAnon":
				m.anon += n << 10
			case "RssFile":
				m.file += n << 10
			}
		}
	}
	return m
}

func (p *proc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt) // best effort: Kill follows
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
	p.log.Close()
}

func (t *target) stop() {
	if t.proc != nil {
		t.proc.stop()
	}
}

func start(work, name string, args ...string) (*proc, error) {
	lf, err := os.OpenFile(filepath.Join(work, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return &proc{cmd: cmd, log: lf}, nil
}

// freeAddr picks a loopback port nobody listens on.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitHTTP polls url until it answers with want, or 20 s pass.
func waitHTTP(url string, want int) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body) // drained so the connection is reused
			resp.Body.Close()
			if resp.StatusCode == want {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready: %w", url, err)
		}
		time.Sleep(50 * time.Millisecond) // polling a child process that has no readiness signal
	}
}

// startReady starts a child process and waits until url answers want;
// a child that never gets ready is stopped.
func startReady(work, name, url string, want int, args ...string) (*proc, error) {
	p, err := start(work, name, args...)
	if err != nil {
		return nil, err
	}
	if err := waitHTTP(url, want); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// launched runs launch once and returns the gateway target that restart
// launches again with it.
func launched(name, addr string, launch func() (*proc, error)) (*target, error) {
	p, err := launch()
	if err != nil {
		return nil, err
	}
	return &target{name: name, addr: addr, proc: p, launch: launch}, nil
}

// startUpstream runs this binary again as the mock upstream, so its CPU is
// nobody's but its own.
func startUpstream(work string, mode upstreamMode) (*target, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p, err := startReady(work, "upstream-"+string(mode), mode.scheme()+"://"+addr+"/v1/models", http.StatusUnauthorized, self, "-serve-upstream", addr, string(mode), work)
	if err != nil {
		return nil, err
	}
	return &target{name: "upstream", addr: addr, proc: p}, nil
}

// startFloor runs the gofloor target (floor.go) in a process of its own.
func startFloor(work string, mode upstreamMode, upstream string) (*target, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return launched("gofloor", addr, func() (*proc, error) {
		return startReady(work, "gofloor-"+string(mode), "http://"+addr+"/health", http.StatusOK, self, "-serve-floor", addr, mode.scheme()+"://"+upstream)
	})
}

// benchToken is the client token of the generated ccload config.
const benchToken = "sk-bench-load"

func startCcload(work, bin string, mode upstreamMode, upstream string) (*target, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("ccload binary %s: %w (run make build)", bin, err)
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(work, "ccload-"+string(mode)+".yaml")
	// Every launch gets a database of its own: a stream scenario restarts
	// ccload to measure memory per stream, and on the database the
	// scenarios before it filled (hundreds of thousands of rows) the
	// dashboard's 24-hour stats cache would be most of what it measures.
	launches := 0
	launch := func() (*proc, error) {
		db := filepath.Join(work, fmt.Sprintf("ccload-%s-%d.db", mode, launches))
		launches++
		if err := os.WriteFile(cfg, []byte(ccloadConfig(addr, mode.scheme()+"://"+upstream, db)), 0o600); err != nil {
			return nil, err
		}
		return startReady(work, "ccload-"+string(mode), "http://"+addr+"/health", http.StatusOK, bin, "serve", "-c", cfg, "--no-watch")
	}
	t, err := launched("ccload", addr, launch)
	if err != nil {
		return nil, err
	}
	t.adminPassword = benchAdminPassword
	return t, nil
}

const benchAdminPassword = "bench-admin"

func ccloadConfig(listen, upstream, db string) string {
	var models []string
	for _, m := range benchModels() {
		models = append(models, strconv.Quote(m))
	}
	return fmt.Sprintf(`version: 1
server:
  listen: %q
  admin_password: %q
  pprof: true
  # Every benchmark connection comes from 127.0.0.1, up to 10,000 at once.
  max_conns: 30000
  max_conns_per_ip: 0
storage:
  driver: sqlite
  dsn: %q
routing:
  timeouts: {first_byte: 60s, non_stream: 60s, stream: 0s}
channels:
  - name: mock
    urls:
      - url: %s
        protocols: [anthropic]
    keys: ["bench-upstream-key"]
    models: [%s]
tokens:
  - name: bench
    token: %q
`, listen, benchAdminPassword, db, upstream, strings.Join(models, ", "), benchToken)
}

// startNginx runs nginx as a keep-alive reverse proxy with its default
// response buffering (the mock's streams say X-Accel-Buffering: no, so their
// events pass at once) and no access log: the least a proxy hop can cost.
// To a TLS mock it speaks http/1.1 (nginx has no h2 to upstreams) over
// kept-alive connections and reuses TLS sessions; it does not verify the
// mock's certificate (proxy_ssl_verify off, its default), which costs
// only at a handshake, and those are rare on kept-alive connections.
func startNginx(work string, mode upstreamMode, upstream string) (*target, error) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/nginx"); serr != nil {
			return nil, errors.New("nginx is not installed (apt-get install nginx-light)")
		}
		bin = "/usr/sbin/nginx"
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(work, "nginx-"+string(mode))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	conf := fmt.Sprintf(`worker_processes auto;
worker_rlimit_nofile %[4]d;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
user root;
events { worker_connections 24000; }
http {
  access_log off;
  # Request bodies stay in memory, as ccload keeps them (the default
  # 16k buffer sent an agent-sized request to a temp file).
  client_body_buffer_size 1m;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  upstream mock { server %[2]s; keepalive 512; }
  server {
    listen %[3]s backlog=4096;
    location / {
      proxy_pass %[5]s://mock;
      proxy_http_version 1.1;
      proxy_ssl_session_reuse on;
      proxy_set_header Connection "";
      proxy_buffering on;
      proxy_read_timeout 120s;
    }
  }
}
`, dir, upstream, addr, noFile(), mode.scheme())
	cf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	return launched("nginx", addr, func() (*proc, error) {
		return startReady(work, "nginx", "http://"+addr+"/v1/models", http.StatusUnauthorized, bin, "-p", dir, "-c", cf, "-g", "daemon off;")
	})
}

// heapProfile saves, in the work directory, what the open streams hold:
// the runtime's MemStats (ccload.memstats.txt, the end of the debug=1
// heap text), the goroutines (ccload.goroutines.txt), then the heap
// profile after a forced collection (ccload.heap.pprof: the live heap,
// each allocation site's share; GODEBUG=memprofilerate=2048 in
// benchload's environment makes it finer) and MemStats after it
// (ccload.memstats-aftergc.txt). The collection makes the run's later
// RSS samples lower than they would be.
func (t *target) heapProfile(work string, mode upstreamMode) {
	for _, f := range []struct{ query, file string }{{"heap?debug=1", "ccload.memstats.txt"}, {"goroutine?debug=1", "ccload.goroutines.txt"}, {"heap?gc=1", "ccload.heap.pprof"}, {"heap?debug=1", "ccload.memstats-aftergc.txt"}} {
		body, err := t.admin("/admin/debug/pprof/" + f.query)
		if err != nil {
			fmt.Fprintln(os.Stderr, "heap profile:", err)
			return
		}
		if strings.HasPrefix(f.query, "heap?debug=1") {
			_, body, _ = bytes.Cut(body, []byte("# runtime.MemStats"))
		}
		path := filepath.Join(work, string(mode)+"-"+f.file)
		if err := os.WriteFile(path, body, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "heap profile:", err)
			return
		}
		fmt.Fprintln(os.Stderr, "heap profile:", path)
	}
}

// admin GETs a path of ccload's admin API.
func (t *target) admin(path string) ([]byte, error) {
	req, _ := http.NewRequest(http.MethodGet, "http://"+t.addr+path, nil)
	req.Header.Set("Authorization", "Bearer "+t.adminPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: status %d", path, resp.StatusCode)
	}
	return io.ReadAll(resp.Body)
}

// profile starts a CPU profile of ccload through its admin pprof endpoint
// and returns a func that waits for it and saves it in the work directory.
func (t *target) profile(work string, mode upstreamMode, d time.Duration) func() error {
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://%s/admin/debug/pprof/profile?seconds=%d", t.addr, int(d.Seconds())), nil)
		req.Header.Set("Authorization", "Bearer "+t.adminPassword)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			done <- fmt.Errorf("pprof: status %d", resp.StatusCode)
			return
		}
		path := filepath.Join(work, string(mode)+"-ccload.cpu.pprof")
		f, err := os.Create(path)
		if err != nil {
			done <- err
			return
		}
		_, err = io.Copy(f, resp.Body)
		f.Close()
		fmt.Fprintln(os.Stderr, "CPU profile:", path)
		done <- err
	}()
	return func() error { return <-done }
}
