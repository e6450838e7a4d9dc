//go:build soak

package soak

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/store"
)

// Knobs, from the environment so `make soak SOAK_DURATION=60s` works.
func knobs(t *testing.T) (dur time.Duration, rate float64, clients int, stores []string, minSuccess float64) {
	dur, rate, clients, minSuccess = 3*time.Minute, 0.19, 32, 99.5
	stores = []string{"sqlite", "postgres"}
	var err error
	if v := os.Getenv("SOAK_DURATION"); v != "" {
		if dur, err = time.ParseDuration(v); err != nil {
			t.Fatalf("SOAK_DURATION: %v", err)
		}
	}
	if v := os.Getenv("SOAK_FAULT_RATE"); v != "" {
		if rate, err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatalf("SOAK_FAULT_RATE: %v", err)
		}
	}
	if v := os.Getenv("SOAK_CLIENTS"); v != "" {
		if clients, err = strconv.Atoi(v); err != nil {
			t.Fatalf("SOAK_CLIENTS: %v", err)
		}
	}
	if v := os.Getenv("SOAK_STORES"); v != "" {
		stores = strings.Split(v, ",")
	}
	if v := os.Getenv("SOAK_MIN_SUCCESS"); v != "" {
		if minSuccess, err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatalf("SOAK_MIN_SUCCESS: %v", err)
		}
	}
	return
}

func TestSoak(t *testing.T) {
	dur, rate, clients, stores, minSuccess := knobs(t)
	bin := filepath.Join(t.TempDir(), "ccload")
	build := exec.Command("go", "build", "-o", bin, "github.com/ccload/ccload")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, st := range stores {
		t.Run(st, func(t *testing.T) {
			driver, dsn := storage(t, st)
			res := run(t, bin, driver, dsn, dur, rate, clients)
			res.print(t, st, dur, rate, clients)
			res.check(t, minSuccess)
		})
	}
}

// storage gives a fresh database for one run: a SQLite file in a temp
// directory, or a PostgreSQL schema of its own (dropped afterwards) in the
// database CCLOAD_TEST_POSTGRES names, never touching its other content.
func storage(t *testing.T, name string) (driver, dsn string) {
	switch name {
	case "sqlite":
		return "sqlite", filepath.Join(t.TempDir(), "soak.db")
	case "postgres":
		base := os.Getenv("CCLOAD_TEST_POSTGRES")
		if base == "" {
			t.Fatal("CCLOAD_TEST_POSTGRES is not set (make soak sets it)")
		}
		schema := fmt.Sprintf("soak_%d", time.Now().UnixNano())
		db, err := sql.Open("pgx", base)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
			t.Fatalf("create schema: %v", err)
		}
		t.Cleanup(func() {
			db.Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE")
			db.Close()
		})
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return "postgres", u.String()
	}
	t.Fatalf("unknown store %q (sqlite, postgres)", name)
	return "", ""
}

const (
	soakToken = "sk-soak-client-token"
	soakModel = "soak-model"
)

// channelsYAML is six channels over the four families, all serving
// soakModel from the one mock upstream. weightBump changes every weight,
// which is what the mid-run reload rewrites.
func configYAML(mockURL, driver, dsn string, weightBump int) string {
	sum := sha256.Sum256([]byte(soakToken))
	var b strings.Builder
	fmt.Fprintf(&b, `version: 1
server: {listen: "127.0.0.1:0", admin_password: soak-admin}
storage: {driver: %s, dsn: %q}
routing:
  max_attempts: 6
  cooldown: {min: 1s, max: 5s, fallback: true}
  timeouts: {first_byte: 1s, non_stream: 30s}
pricing:
  %s: {input: 1, output: 2}
tokens:
  - {name: soak, token_sha256: %s}
channels:
`, driver, dsn, soakModel, hex.EncodeToString(sum[:]))
	chans := []struct{ name, proto string }{
		{"anthropic-a", "anthropic"}, {"anthropic-b", "anthropic"},
		{"chat-a", "openai"}, {"chat-b", "openai"},
		{"responses-a", "responses"}, {"gemini-a", "gemini"},
	}
	for i, c := range chans {
		fmt.Fprintf(&b, `  - name: %s
    weight: %d
    urls: [{url: %q, protocols: [%s]}]
    keys: [%s-key-1, %s-key-2]
    models: [%s]
`, c.name, 1+(i+weightBump)%3, mockURL, c.proto, c.name, c.name, soakModel)
	}
	return b.String()
}

// outcome is what one client request saw.
type outcome struct {
	id     string
	fam    family
	stream bool
	status int    // 0: no HTTP answer
	ok     bool   // 200 and exactly the mock's text, once
	why    string // failure description, when !ok
	end    time.Time
}

// result is one soak run.
type result struct {
	outcomes      []outcome
	rows          map[string]int // request id -> log rows
	rowByID       map[string]store.LogRow
	extraRows     int // rows whose request id no client sent
	wrongScope    map[string]int
	attempts      int
	injected      map[fault]int
	reloads       int
	slowStreamsOK int
	slowStreams   int
	exitErr       error
	term          time.Time // when SIGTERM was sent
}

func run(t *testing.T, bin, driver, dsn string, dur time.Duration, rate float64, clients int) *result {
	script := newFaultScript(rate)
	mock := mockupstream.New(mockupstream.Options{Script: script.reply, MaxRecorded: 1})
	mockURL, err := mock.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close()

	dir := t.TempDir()
	cfg := filepath.Join(dir, "ccload.yaml")
	writeFile(t, cfg, configYAML(mockURL, driver, dsn, 0))
	cmd := exec.Command(bin, "serve", "-c", cfg, "--grace", "60s")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logTail := &tail{}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`msg="ccload serving" addr=(\S+)`)
		for sc.Scan() {
			logTail.add(sc.Text())
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addrc <- m[1]
			}
		}
	}()
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("ccload serve did not start:\n%s", logTail)
	}

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients * 2}}
	var (
		gate     sync.RWMutex // held for writing while stopping: no request starts after
		stopping bool
		mu       sync.Mutex
		outs     []outcome
		seq      atomic.Int64
		wg       sync.WaitGroup
	)
	record := func(o outcome) {
		mu.Lock()
		outs = append(outs, o)
		mu.Unlock()
	}
	start := func() bool {
		gate.RLock()
		defer gate.RUnlock()
		if stopping {
			return false
		}
		wg.Add(1)
		return true
	}
	worker := func() {
		for start() {
			f := families[rand.IntN(len(families))]
			id := fmt.Sprintf("soak-%d", seq.Add(1))
			record(call(hc, base, id, f, rand.IntN(2) == 0, markerNormal, nil))
			wg.Done()
		}
	}
	var workers sync.WaitGroup
	for range clients {
		workers.Add(1)
		go func() { defer workers.Done(); worker() }()
	}

	// Halfway: rewrite the file (watched by serve) with other weights.
	time.Sleep(dur / 2)
	writeFile(t, cfg, configYAML(mockURL, driver, dsn, 1))
	time.Sleep(dur / 2)

	// Open slow streams, wait until each has its first event, then SIGTERM
	// while they (and whatever the workers have in flight) are open.
	const slow = 8
	var firsts sync.WaitGroup
	firsts.Add(slow)
	slowOuts := make([]outcome, slow)
	for i := range slow {
		if !start() {
			t.Fatal("stopped too early")
		}
		go func() {
			defer wg.Done()
			var once sync.Once
			slowOuts[i] = call(hc, base, fmt.Sprintf("soak-slow-%d", i), families[i%len(families)], true, markerSlow,
				func() { once.Do(firsts.Done) })
			once.Do(firsts.Done) // failed before any event
		}()
	}
	firsts.Wait()
	res := &result{reloads: health(hc, base)}
	gate.Lock()
	stopping = true
	gate.Unlock()
	res.term = time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	workers.Wait()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case res.exitErr = <-exited:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("ccload did not exit after SIGTERM:\n%s", logTail)
	}
	if res.exitErr != nil {
		t.Errorf("ccload serve exited with %v:\n%s", res.exitErr, logTail)
	}
	res.slowStreams = slow
	for _, o := range slowOuts {
		if o.ok {
			res.slowStreamsOK++
		}
	}
	res.outcomes = append(outs, slowOuts...)
	res.attempts, res.injected = script.counts()
	res.readRows(t, driver, dsn)
	return res
}

// call sends one request and judges the answer: HTTP 200 with exactly the
// mock's text, once (a duplicated or missing delta changes the text).
func call(hc *http.Client, base, id string, f family, stream bool, marker string, firstEvent func()) (o outcome) {
	o = outcome{id: id, fam: f, stream: stream}
	defer func() { o.end = time.Now() }()
	cr := newClientRequest(f, soakModel, soakToken, marker, stream)
	req, _ := http.NewRequest("POST", base+cr.path, strings.NewReader(cr.body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-request-id", id)
	for k, v := range cr.header {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		o.why = "no answer: " + err.Error()
		return o
	}
	defer resp.Body.Close()
	o.status = resp.StatusCode
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		o.why = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, errMessage(b))
		return o
	}
	var text string
	if stream {
		sr, err := readStream(f, resp.Body, firstEvent)
		switch {
		case err != nil:
			o.why = "stream broke: " + err.Error()
			return o
		case sr.errText != "":
			o.why = "stream error event: " + errMessage([]byte(sr.errText))
			return o
		case !sr.ended:
			o.why = "stream ended without its end marker"
			return o
		}
		text = sr.text
	} else {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			o.why = "body broke: " + err.Error()
			return o
		}
		text = answerText(f, b)
	}
	if text != mockupstream.DefaultText {
		o.why = fmt.Sprintf("wrong text (duplicated or lost output): %q", text)
		return o
	}
	o.ok = true
	return o
}

var digits = regexp.MustCompile(`[0-9]+`)

// errMessage is the error text of any family's error JSON, with numbers
// folded so that failures group in the breakdown.
func errMessage(b []byte) string {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	msg := string(b)
	if json.Unmarshal(b, &v) == nil && len(v.Error) > 0 {
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(v.Error, &e) == nil && e.Message != "" {
			msg = e.Message
		}
	}
	msg = digits.ReplaceAllString(msg, "N")
	if len(msg) > 140 {
		msg = msg[:140] + "…"
	}
	return msg
}

func health(hc *http.Client, base string) int {
	resp, err := hc.Get(base + "/health")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var h struct {
		Config struct {
			Reloads int `json:"reloads"`
		} `json:"config"`
	}
	json.NewDecoder(resp.Body).Decode(&h)
	return h.Config.Reloads
}

// readRows reads every log row back and checks each attempt's scope.
func (res *result) readRows(t *testing.T, driver, dsn string) {
	ctx := context.Background()
	st, err := store.Open(ctx, driver, dsn)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	defer st.Close()
	sent := map[string]bool{}
	for _, o := range res.outcomes {
		sent[o.id] = true
	}
	res.rows, res.rowByID, res.wrongScope = map[string]int{}, map[string]store.LogRow{}, map[string]int{}
	var before int64
	for {
		page, err := st.QueryLogs(ctx, store.LogQuery{BeforeID: before, Limit: store.MaxLogLimit})
		if err != nil {
			t.Fatalf("query logs: %v", err)
		}
		for _, row := range page {
			before = row.ID
			if !sent[row.RequestID] {
				res.extraRows++
				continue
			}
			res.rows[row.RequestID]++
			res.rowByID[row.RequestID] = row
			var atts []struct {
				Status int    `json:"status"`
				Kind   string `json:"kind"`
				Scope  string `json:"scope"`
			}
			json.Unmarshal([]byte(row.AttemptsJSON), &atts)
			for _, a := range atts {
				if a.Kind == "" || a.Kind == "canceled" || a.Kind == "client" {
					continue
				}
				if want := expectedScope(a.Status, a.Kind); a.Scope != want {
					res.wrongScope[fmt.Sprintf("status %d kind %s: scope %s, want %s", a.Status, a.Kind, a.Scope, want)]++
				}
			}
		}
		if len(page) < store.MaxLogLimit {
			return
		}
	}
}

func (res *result) succeeded() (ok, total int) {
	for _, o := range res.outcomes {
		total++
		if o.ok {
			ok++
		}
	}
	return
}

func (res *result) print(t *testing.T, st string, dur time.Duration, rate float64, clients int) {
	ok, total := res.succeeded()
	var b strings.Builder
	fmt.Fprintf(&b, "\nsoak on %s: %s, %d clients, 6 channels, fault rate %.0f%% per attempt, max_attempts 6\n", st, dur, clients, rate*100)
	fmt.Fprintf(&b, "  requests %d, succeeded %d = %.3f%%\n", total, ok, 100*float64(ok)/float64(max(total, 1)))
	fmt.Fprintf(&b, "  upstream attempts %d (%.2f per request), faults injected %d (%.1f%%)\n",
		res.attempts, float64(res.attempts)/float64(max(total, 1)), sum(res.injected), 100*float64(sum(res.injected))/float64(max(res.attempts, 1)))
	for _, f := range faults {
		fmt.Fprintf(&b, "    %-42s %6d\n", f, res.injected[f])
	}
	why := map[string]int{}
	byAttempts := map[int]int{}
	for _, o := range res.outcomes {
		if o.ok {
			continue
		}
		why[o.why]++
		byAttempts[res.rowByID[o.id].Attempts]++
	}
	late := why["stream error event: upstream stream failed: unexpected EOF"] +
		why[`stream error event: {"type":"error","code":"server_error","message":"upstream stream failed: unexpected EOF","param":null}`]
	fmt.Fprintf(&b, "  failures %d, of which %d are cuts after content reached the client (no retry possible: it would duplicate output);\n", total-ok, late)
	fmt.Fprintf(&b, "  success over the failures a gateway can recover from: %.3f%%\n", 100*float64(ok)/float64(max(total-late, 1)))
	for _, k := range sortedKeys(why) {
		fmt.Fprintf(&b, "    %6d  %s\n", why[k], k)
	}
	if len(byAttempts) > 0 {
		fmt.Fprintf(&b, "  failures by attempts used:")
		var ns []int
		for n := range byAttempts {
			ns = append(ns, n)
		}
		sort.Ints(ns)
		for _, n := range ns {
			fmt.Fprintf(&b, " %d:%d", n, byAttempts[n])
		}
		b.WriteString("\n")
	}
	var noAnswer, noAnswerAfterTerm int
	for _, o := range res.outcomes {
		if o.status == 0 {
			noAnswer++
			if !o.end.Before(res.term) {
				noAnswerAfterTerm++
			}
		}
	}
	fmt.Fprintf(&b, "  requests with no HTTP answer %d (%d of them ended after SIGTERM was sent)\n", noAnswer, noAnswerAfterTerm)
	fmt.Fprintf(&b, "  reloads seen in /health: %d; streams open across SIGTERM completed: %d/%d\n", res.reloads, res.slowStreamsOK, res.slowStreams)
	missing, dup := res.rowCounts()
	fmt.Fprintf(&b, "  log rows: missing %d, duplicated %d, unknown %d; attempts with a wrong cooldown scope %d\n",
		missing, dup, res.extraRows, sum(res.wrongScope))
	for _, k := range sortedKeys(res.wrongScope) {
		fmt.Fprintf(&b, "    %6d  %s\n", res.wrongScope[k], k)
	}
	t.Log(b.String())
}

// rowCounts counts requests with an HTTP answer but no row, and with more
// than one. A request that got no answer at all may lack a row only if the
// gateway never read it; the soak sends none after SIGTERM.
func (res *result) rowCounts() (missing, dup int) {
	for _, o := range res.outcomes {
		switch n := res.rows[o.id]; {
		case n == 0 && o.status == 0:
			// No HTTP answer: the gateway may never have read it (a
			// keep-alive connection closed by the shutdown as the request
			// went out); counted as a failure, not as a missing row.
		case n == 0:
			missing++
		case n > 1:
			dup++
		}
	}
	return
}

func (res *result) check(t *testing.T, minSuccess float64) {
	ok, total := res.succeeded()
	if total == 0 {
		t.Fatal("no requests were sent")
	}
	if missing, dup := res.rowCounts(); missing+dup+res.extraRows > 0 {
		t.Errorf("log rows: %d requests without a row, %d with more than one, %d rows of unknown requests", missing, dup, res.extraRows)
	}
	if n := sum(res.wrongScope); n > 0 {
		t.Errorf("%d attempts cooled the wrong scope", n)
	}
	if res.reloads < 1 {
		t.Errorf("the mid-run config rewrite was not reloaded (/health reloads = %d)", res.reloads)
	}
	if res.slowStreamsOK != res.slowStreams {
		t.Errorf("only %d of %d streams open across SIGTERM completed", res.slowStreamsOK, res.slowStreams)
	}
	if pct := 100 * float64(ok) / float64(total); pct < minSuccess {
		t.Errorf("success %.3f%% < %.2f%% (SOAK_MIN_SUCCESS)", pct, minSuccess)
	}
}

func sum[K comparable](m map[K]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	return keys
}

func writeFile(t *testing.T, path, content string) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// tail keeps the last lines of the server's stderr for failure reports.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (l *tail) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
	if len(l.lines) > 40 {
		l.lines = l.lines[1:]
	}
}

func (l *tail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
