package cmd

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
)

const (
	checkGoodKey = "sk-good-0123456789abcdef"
	checkBadKey  = "sk-bad-0123456789abcdef"
)

// checkConfig has one channel per outcome. The mock accepts only
// checkGoodKey and answers by model: m-ok succeeds, m-missing is a 404
// not_found_error, m-500 a 500, m-slow waits before the status line and
// m-drip streams one event and then stalls. slow and drip are disabled, so
// only tests that name them probe them.
const checkConfig = `version: 1
channels:
  - name: ok
    urls: [{url: "${MOCK_URL}", protocols: [anthropic]}]
    keys: ["${GOOD_KEY}"]
    models: [m-ok, {name: alias, upstream: m-ok}, {name: m-off, disabled: true}]
  - name: badkey
    urls: [{url: "${MOCK_URL}", protocols: [openai]}]
    keys: [` + checkBadKey + `]
    models: [m-ok]
  - name: nomodel
    urls: [{url: "${MOCK_URL}", protocols: [anthropic]}]
    keys: ["${GOOD_KEY}"]
    models: [m-missing]
  - name: broken
    urls: [{url: "${MOCK_URL}", protocols: [gemini]}]
    keys: ["${GOOD_KEY}"]
    models: [m-500]
  - name: down
    urls: [{url: "http://127.0.0.1:1", protocols: [anthropic]}]
    keys: ["${GOOD_KEY}"]
    models: [m-ok]
  - name: slow
    urls: [{url: "${MOCK_URL}", protocols: [responses]}]
    keys: ["${GOOD_KEY}"]
    models: [m-slow]
    enabled: false
  - name: drip
    urls: [{url: "${MOCK_URL}", protocols: [anthropic]}]
    keys: ["${GOOD_KEY}"]
    models: [m-drip]
    enabled: false
`

// checkEnv is a config file on disk and the mock it points at.
type checkEnv struct {
	file string
	env  map[string]string
	mock *mockupstream.Server
}

func startCheckEnv(t *testing.T) *checkEnv {
	t.Helper()
	m := mockupstream.New(mockupstream.Options{Keys: []string{checkGoodKey}, Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		switch r.Model {
		case "m-missing":
			return mockupstream.Reply{Status: 404, Raw: []byte(`{"type":"error","error":{"type":"not_found_error","message":"model: m-missing"}}`)}
		case "m-500":
			return mockupstream.Reply{Status: 500}
		case "m-slow":
			return mockupstream.Reply{FirstByteDelay: 10 * time.Second}
		case "m-drip":
			return mockupstream.Reply{EventDelay: 10 * time.Second}
		}
		return mockupstream.DefaultReply(r)
	}})
	u, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	file := filepath.Join(t.TempDir(), "ccload.yaml")
	if err := os.WriteFile(file, []byte(checkConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return &checkEnv{file: file, env: map[string]string{"MOCK_URL": u, "GOOD_KEY": checkGoodKey}, mock: m}
}

// opts returns check options over the env's file with test defaults.
func (e *checkEnv) opts(tty bool) (*CheckOptions, *strings.Builder, *strings.Builder) {
	out, errb := &strings.Builder{}, &strings.Builder{}
	return &CheckOptions{
		IO:        IOStreams{In: strings.NewReader(""), Out: out, Err: errb, IsTTY: tty},
		Config:    e.file,
		Parallel:  defaultCheckParallel,
		Timeout:   5 * time.Second,
		LookupEnv: func(k string) (string, bool) { v, ok := e.env[k]; return v, ok },
	}, out, errb
}

// exitCode is the process exit status checkRun's error stands for.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		t.Fatalf("error without an exit code: %v", err)
	}
	return ee.code
}

func decodeReport(t *testing.T, s string) checkReport {
	t.Helper()
	var rep checkReport
	if err := json.Unmarshal([]byte(s), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, s)
	}
	return rep
}

// byChannel returns the results of one channel.
func byChannel(rs []engine.ProbeResult, ch string) []engine.ProbeResult {
	var out []engine.ProbeResult
	for _, r := range rs {
		if r.Channel == ch {
			out = append(out, r)
		}
	}
	return out
}

// TestCheckProbesReportScopes: each channel's probe carries the scope and
// kind the classifier gives its failure, in JSON, the table and TSV alike.
func TestCheckProbesReportScopes(t *testing.T) {
	env := startCheckEnv(t)
	want := map[string]struct {
		n           int
		ok          bool
		scope, kind string
	}{
		"ok":      {2, true, "", ""},
		"badkey":  {1, false, "key", "auth"},
		"nomodel": {1, false, "model", "not_found"},
		"broken":  {1, false, "model", "server"},
		"down":    {1, false, "url", "network"},
	}

	opts, out, errb := env.opts(false)
	opts.JSON = true
	if code := exitCode(t, checkRun(opts)); code != exitFail {
		t.Fatalf("exit %d, want %d\n%s", code, exitFail, errb)
	}
	rep := decodeReport(t, out.String())
	if !rep.Valid || rep.Offline || rep.File != env.file || len(rep.Probes) != 6 {
		t.Fatalf("report header %+v, %d probes", rep, len(rep.Probes))
	}
	for ch, w := range want {
		rs := byChannel(rep.Probes, ch)
		if len(rs) != w.n {
			t.Fatalf("channel %s: %d probes, want %d", ch, len(rs), w.n)
		}
		for _, r := range rs {
			if r.OK != w.ok || string(r.Scope) != w.scope || string(r.Kind) != w.kind {
				t.Errorf("channel %s: ok=%v scope=%q kind=%q (%s), want ok=%v scope=%q kind=%q",
					ch, r.OK, r.Scope, r.Kind, r.Message, w.ok, w.scope, w.kind)
			}
			if !r.OK && r.Message == "" {
				t.Errorf("channel %s: failure without a message", ch)
			}
		}
	}
	if rs := byChannel(rep.Probes, "ok"); rs[1].Model != "alias" || rs[1].Upstream != "m-ok" {
		t.Errorf("renamed model reported as %q -> %q", rs[1].Model, rs[1].Upstream)
	}
	s := rep.Summary
	if s.OK != 2 || s.Failed != 4 || s.ExitCode != exitFail ||
		s.ByScope["key"] != 1 || s.ByScope["model"] != 2 || s.ByScope["url"] != 1 || s.ByScope["channel"] != 0 {
		t.Errorf("summary %+v", s)
	}
	const line = "2 ok, 4 failed (key: 1, model: 2, url: 1, channel: 0)"
	if !strings.Contains(errb.String(), line) {
		t.Errorf("stderr %q, want the summary %q", errb, line)
	}
	for _, r := range env.mock.Requests() {
		if r.Model == "m-off" {
			t.Errorf("the disabled model was probed")
		}
	}

	// Terminal: an aligned table within 100 columns, each failure followed
	// by its message on an indented line, then the summary.
	opts, out, _ = env.opts(true)
	if code := exitCode(t, checkRun(opts)); code != exitFail {
		t.Fatalf("tty exit %d", code)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1+6+4+1 || !strings.HasPrefix(lines[0], "CHANNEL") || lines[len(lines)-1] != line {
		t.Fatalf("table:\n%s", out)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > maxWidth {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	resultCol := strings.Index(lines[0], "RESULT")
	for i, l := range lines[1 : len(lines)-1] {
		if strings.HasPrefix(l, "    ") {
			continue // a message line
		}
		ch := strings.Fields(l)[0]
		w := want[ch]
		result := string([]rune(l)[resultCol:]) // columns are runes: fingerprints have "…"
		if w.ok && result != "ok" || !w.ok && result != "FAIL" {
			t.Errorf("row %q: result %q, want ok=%v", l, result, w.ok)
		}
		if next := lines[i+2]; !w.ok && !strings.HasPrefix(next, "    "+w.scope+"/"+w.kind) {
			t.Errorf("row %q is not followed by its %s/%s message: %q", l, w.scope, w.kind, next)
		}
	}
	for _, s := range []string{"alias -> m-ok", "    key/auth, HTTP 401: ", "    model/not_found, HTTP 404: model: m-missing",
		"    url/network: ", "refused"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}

	// No terminal: a header line, then tab-separated rows.
	opts, out, _ = env.opts(false)
	checkRun(opts)
	lines = strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if lines[0] != strings.Join(probeTSVHeader, "\t") || len(lines) != 7 {
		t.Fatalf("tsv:\n%s", out)
	}
	scopeCol, resultCol := slices.Index(probeTSVHeader, "scope"), slices.Index(probeTSVHeader, "result")
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if len(f) != len(probeTSVHeader) {
			t.Fatalf("tsv row of %d fields: %q", len(f), l)
		}
		w := want[f[0]]
		if f[scopeCol] != w.scope || (f[resultCol] == "ok") != w.ok {
			t.Errorf("tsv row %q: want scope %q ok=%v", l, w.scope, w.ok)
		}
	}
}

// TestCheckNeverPrintsKeys: keys appear only as fingerprints.
func TestCheckNeverPrintsKeys(t *testing.T) {
	env := startCheckEnv(t)
	for _, mode := range []string{"tty", "tsv", "json"} {
		opts, out, errb := env.opts(mode == "tty")
		opts.JSON = mode == "json"
		checkRun(opts)
		for _, k := range []string{checkGoodKey, checkBadKey} {
			if strings.Contains(out.String()+errb.String(), k) {
				t.Errorf("%s output shows key %s", mode, k)
			}
		}
	}
}

// TestCheckFailOnDecidesExit: only failures in a --fail-on scope fail the run.
func TestCheckFailOnDecidesExit(t *testing.T) {
	env := startCheckEnv(t)
	cases := []struct {
		name     string
		failOn   []string
		channels []string
		want     int
	}{
		{"default, key model url failures", nil, nil, exitFail},
		{"default, all ok", nil, []string{"ok"}, exitOK},
		{"key, only url and model failures", []string{"key"}, []string{"ok", "nomodel", "broken", "down"}, exitOK},
		{"key, a key failure", []string{"key"}, nil, exitFail},
		{"url, a refused URL", []string{"url"}, []string{"ok", "down"}, exitFail},
		{"model and channel, a refused URL", []string{"model", "channel"}, []string{"ok", "down"}, exitOK},
		{"case-insensitive", []string{"KEY", " url"}, []string{"down"}, exitFail},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts, out, errb := env.opts(false)
			opts.JSON, opts.Channels, opts.FailOn = true, c.channels, c.failOn
			if got := exitCode(t, checkRun(opts)); got != c.want {
				t.Fatalf("exit %d, want %d\n%s%s", got, c.want, out, errb)
			}
			if rep := decodeReport(t, out.String()); rep.Summary.ExitCode != c.want {
				t.Errorf("summary.exit_code %d, want %d", rep.Summary.ExitCode, c.want)
			}
			if c.want == exitOK && len(c.failOn) > 0 && !strings.Contains(errb.String(), "outside --fail-on") {
				t.Errorf("stderr does not say failures were ignored: %q", errb)
			}
		})
	}
}

// TestCheckTimeoutDoesNotHang: an upstream slower than --timeout is a
// url/timeout failure reported in about --timeout, before headers and in
// the middle of a stream alike.
func TestCheckTimeoutDoesNotHang(t *testing.T) {
	env := startCheckEnv(t)
	const timeout = 300 * time.Millisecond
	opts, out, errb := env.opts(false)
	opts.JSON, opts.Stream, opts.Timeout = true, true, timeout
	opts.Channels = []string{"slow", "drip"}
	start := time.Now()
	code := exitCode(t, checkRun(opts))
	if took := time.Since(start); took > timeout+2*time.Second {
		t.Fatalf("check took %s with --timeout %s", took, timeout)
	}
	if code != exitFail {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	rep := decodeReport(t, out.String())
	type key struct {
		ch     string
		stream bool
	}
	got := map[key]engine.ProbeResult{}
	for _, r := range rep.Probes {
		got[key{r.Channel, r.Stream}] = r
	}
	for _, k := range []key{{"slow", false}, {"slow", true}, {"drip", true}} {
		r := got[k]
		if r.OK || r.Kind != "timeout" || r.Scope != "url" {
			t.Errorf("%v: ok=%v kind=%q scope=%q (%s), want a url/timeout failure", k, r.OK, r.Kind, r.Scope, r.Message)
		}
		if r.TotalMs > (timeout + time.Second).Milliseconds() {
			t.Errorf("%v: total %dms", k, r.TotalMs)
		}
	}
	// A non-stream reply arrives whole: the stalling stream does not affect it.
	if r := got[key{"drip", false}]; !r.OK {
		t.Errorf("drip non-stream: %+v", r)
	}
}

// TestCheckFilters: --channel and --model narrow the probes; names that
// match nothing are usage errors.
func TestCheckFilters(t *testing.T) {
	env := startCheckEnv(t)
	type probe struct{ ch, model string }
	cases := []struct {
		name             string
		channels, models []string
		stream           bool
		want             []probe
	}{
		{"one channel, one model", []string{"ok"}, []string{"alias"}, false, []probe{{"ok", "alias"}}},
		{"upstream name matches renames", nil, []string{"m-ok"}, false,
			[]probe{{"ok", "m-ok"}, {"ok", "alias"}, {"badkey", "m-ok"}, {"down", "m-ok"}}},
		{"a disabled model when named", []string{"ok"}, []string{"m-off"}, false, []probe{{"ok", "m-off"}}},
		{"stream doubles", []string{"ok"}, []string{"alias"}, true, []probe{{"ok", "alias"}, {"ok", "alias"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts, out, _ := env.opts(false)
			opts.JSON, opts.Channels, opts.Models, opts.Stream = true, c.channels, c.models, c.stream
			opts.FailOn = []string{"channel"} // the probes' outcomes are not under test here
			if err := checkRun(opts); err != nil {
				t.Fatal(err)
			}
			var got []probe
			for _, r := range decodeReport(t, out.String()).Probes {
				got = append(got, probe{r.Channel, r.Model})
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("probed %v, want %v", got, c.want)
			}
		})
	}

	for _, c := range []struct {
		name             string
		channels, models []string
		msg              string
	}{
		{"unknown channel", []string{"nope"}, nil, `no channel "nope"`},
		{"unknown model", nil, []string{"gpt-nope"}, `serves "gpt-nope"`},
		{"model of another channel", []string{"ok"}, []string{"m-500"}, `serves "m-500"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts, out, _ := env.opts(false)
			opts.Channels, opts.Models = c.channels, c.models
			err := checkRun(opts)
			if code := exitCode(t, err); code != exitUsage || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("exit %d, err %v; want %d and %q", code, err, exitUsage, c.msg)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q", out)
			}
		})
	}
}

// TestCheckFlags: flags reach the options through runF, and values cobra
// cannot check are usage errors.
func TestCheckFlags(t *testing.T) {
	parse := func(args ...string) (*CheckOptions, error) {
		io, _, _ := testIO()
		var got *CheckOptions
		c := NewCmdCheck(&Factory{IO: io}, func(o *CheckOptions) error { got = o; return nil })
		c.SetArgs(args)
		c.SetOut(io.Out)
		c.SetErr(io.Err)
		return got, c.Execute()
	}
	o, err := parse()
	if err != nil || o.Config != "ccload.yaml" || o.Parallel != 4 || o.Timeout != 20*time.Second ||
		o.FailOn != nil || o.Offline || o.Stream || o.JSON || o.Channels != nil || o.Models != nil {
		t.Fatalf("defaults: %+v, %v", o, err)
	}
	o, err = parse("-c", "x.yaml", "--offline", "--channel", "a", "--channel", "b,c", "--model", "m1",
		"--stream", "--parallel", "2", "--timeout", "5s", "--fail-on", "key,url", "--fail-on", "model", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if o.Config != "x.yaml" || !o.Offline || !slices.Equal(o.Channels, []string{"a", "b,c"}) ||
		!slices.Equal(o.Models, []string{"m1"}) || !o.Stream || o.Parallel != 2 || o.Timeout != 5*time.Second ||
		!slices.Equal(o.FailOn, []string{"key", "url", "model"}) || !o.JSON {
		t.Fatalf("parsed: %+v", o)
	}
	for _, args := range [][]string{{"--timeout", "soon"}, {"--parallel", "x"}, {"--bogus"}, {"extra-arg"}} {
		if _, err := parse(args...); err == nil {
			t.Errorf("%v: no error", args)
		} else if errors.As(err, new(*exitError)) {
			t.Errorf("%v: %v should be cobra's usage error (exit %d)", args, err, exitUsage)
		}
	}

	env := startCheckEnv(t)
	for _, bad := range []func(*CheckOptions){
		func(o *CheckOptions) { o.Parallel = 0 },
		func(o *CheckOptions) { o.Timeout = 0 },
		func(o *CheckOptions) { o.FailOn = []string{"key", "planet"} },
	} {
		opts, out, _ := env.opts(false)
		bad(opts)
		if code := exitCode(t, checkRun(opts)); code != exitUsage {
			t.Errorf("%+v: exit %d, want %d", opts, code, exitUsage)
		}
		if out.Len() != 0 {
			t.Errorf("stdout %q", out)
		}
	}
	if got := len(env.mock.Requests()); got != 0 {
		t.Errorf("usage errors sent %d probe(s)", got)
	}
}

// TestCheckJSONOfflineAndInvalid: --json without probes still has the
// documented shape.
func TestCheckJSONOfflineAndInvalid(t *testing.T) {
	env := startCheckEnv(t)
	opts, out, _ := env.opts(false)
	opts.JSON, opts.Offline = true, true
	if err := checkRun(opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"probes": []`) {
		t.Errorf("probes is not an empty array:\n%s", out)
	}
	rep := decodeReport(t, out.String())
	if !rep.Valid || !rep.Offline || rep.Summary.ExitCode != 0 || len(env.mock.Requests()) != 0 {
		t.Errorf("offline report %+v", rep)
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("version: 1\nchannels:\n  - name: a\n    prority: 1\n"), 0o600)
	opts, out, errb := env.opts(false)
	opts.JSON, opts.Config = true, bad
	if code := exitCode(t, checkRun(opts)); code != exitFail {
		t.Fatalf("exit %d", code)
	}
	rep = decodeReport(t, out.String())
	typo := slices.ContainsFunc(rep.Problems, func(p config.Problem) bool {
		return p.Line == 4 && p.Col == 5 && strings.Contains(p.Msg, `"priority"`)
	})
	if rep.Valid || !typo || rep.Summary.ExitCode != exitFail {
		t.Errorf("invalid report %+v", rep)
	}
	if !strings.Contains(errb.String(), "bad.yaml:4:5:") {
		t.Errorf("stderr %q", errb)
	}
}

// TestCheckTableFitsWidth: long channel names, renames and hosts still fit
// 100 columns, channels stay distinct however they are cut, and a failure's
// cause survives the cut.
func TestCheckTableFitsWidth(t *testing.T) {
	table := func(channelA, channelB string, stream bool) []string {
		t.Helper()
		results := []engine.ProbeResult{
			{Channel: channelA, Model: "claude-opus-4-8", Upstream: "claude-opus-4-6", Key: "sk-a…f3c9",
				Protocol: "anthropic", OK: true, Status: 200, TTFBMs: 812, TotalMs: 1204},
			{Channel: channelB, Model: "claude-opus-4-8", Upstream: "claude-opus-4-6", Key: "sk-a…f3c9",
				Protocol: "anthropic", Kind: "network", Scope: "url",
				Message: `Post "https://relay.example.com/v1/messages": dial tcp 10.0.0.1:443: connect: connection refused`},
			{Channel: "gemini", Model: "gemini-3.1-pro-preview", Upstream: "gemini-3.1-pro-preview", Key: "AIza…Qx0c",
				Protocol: "gemini", Status: 429, Kind: "rate_limit", Scope: "key", Message: strings.Repeat("quota exceeded ", 20)},
		}
		hosts := []string{"relay-eu.anthropic-proxy.example.com", "relay-eu.anthropic-proxy.example.com", "generativelanguage.googleapis.com"}
		var b strings.Builder
		if err := printProbeTable(&b, results, hosts, stream, false); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > maxWidth {
				t.Errorf("line of %d columns: %q", n, l)
			}
		}
		if len(lines) != 1+3+2 {
			t.Fatalf("table:\n%s", b.String())
		}
		if a, b := strings.Fields(lines[1])[0], strings.Fields(lines[2])[0]; a == b {
			t.Errorf("channels %q and %q both shown as %q", channelA, channelB, a)
		}
		if !strings.HasPrefix(lines[3], "    url/network: dial tcp") || !strings.HasSuffix(lines[3], "connection refused") ||
			!strings.HasPrefix(lines[5], "    key/rate_limit, HTTP 429: quota") {
			t.Errorf("failure lines:\n%s", b.String())
		}
		return lines
	}
	for _, stream := range []bool{false, true} {
		lines := table("anthropic-main", "anthropic-backup", stream)
		if !stream && !strings.Contains(lines[1], "claude-opus-4-8 -> ...4-6") {
			t.Errorf("rename not shown compactly:\n%s", strings.Join(lines, "\n"))
		}
		table("anthropic-main-relay-eu", "anthropic-backup-relay-eu", stream) // differ only in the middle
	}
	if got := shortUpstream("claude-opus-4-8", "claude-opus-4-6"); got != "...4-6" {
		t.Errorf("shortUpstream = %q", got)
	}
	if got := shortUpstream("gpt-5", "my-deployment"); got != "my-deployment" {
		t.Errorf("shortUpstream of unrelated names = %q", got)
	}
}
