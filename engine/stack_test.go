package engine_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/engine/listen"
)

// stackChildEnv carries the mock upstream's URL to the child process of
// TestRequestsFitEightKiBStack.
const stackChildEnv = "CCLOAD_TEST_STACK_CHILD"

// TestRequestsFitEightKiBStack checks that a request, stream or not, never
// needs more than 8 KiB of goroutine stack. fasthttp serves a connection
// on one goroutine and reuses it; a stream's goroutine then waits deep
// enough that the runtime cannot shrink its stack back, so one request
// that reached past 8 KiB made every later stream on that goroutine hold
// 16 KiB (perf: at 1,000 streams that was 7 MiB of the memory).
//
// The requests run in a child process whose stacks are capped at 8 KiB
// (debug.SetMaxStack): a goroutine that needs more kills it with a "stack
// overflow" and the stack that did it, which this test prints. The mock
// upstream runs here, in the parent, as net/http's server needs more.
func TestRequestsFitEightKiBStack(t *testing.T) {
	if up := os.Getenv(stackChildEnv); up != "" {
		requestsInSmallStacks(t, up)
		return
	}
	bin := os.Args[0]
	if raceEnabled {
		// The race detector's instrumentation makes frames larger; what
		// must fit is the binary that ships, so the child is this
		// package's tests built without it.
		bin = buildWithoutRace(t)
	}
	_, up := startMock(t, mockupstream.Options{})
	cmd := exec.Command(bin, "-test.run=^TestRequestsFitEightKiBStack$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), stackChildEnv+"="+up)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child with 8 KiB stacks: %v\n%s", err, overflowTrace(out))
	}
	if !bytes.Contains(out, []byte("requests served in 8 KiB stacks: 8")) {
		t.Fatalf("child did not run its requests:\n%s", tailLines(out, 40))
	}
}

// buildWithoutRace compiles this package's tests without -race and
// returns the binary (go test runs in the package's directory).
func buildWithoutRace(t *testing.T) string {
	t.Helper()
	// go test puts its own toolchain first on the PATH of the tests it runs.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go tool on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "engine.test")
	if out, err := exec.Command(goTool, "test", "-c", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building the tests without -race: %v\n%s", err, out)
	}
	return bin
}

// requestsInSmallStacks is the child: a gateway with no log store (the
// SQLite writer's own goroutine runs deeper, and there is only one), one
// keep-alive connection dialled before the cap, and one stream and one
// non-stream request per native family over it.
func requestsInSmallStacks(t *testing.T, up string) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ccload.yaml")
	yaml := strings.ReplaceAll(strings.ReplaceAll(nativeConfig, "{{MOCK}}", up), "{{TOKEN_SHA}}", sha256hex(testToken))
	yaml = strings.ReplaceAll(yaml, "{{DB}}", filepath.Join(dir, "ccload.db"))
	// Priced, so that no request logs the one-time "no price" warning,
	// whose slog path runs deeper than requests (and happens once a model).
	yaml += "pricing:\n"
	for _, m := range []string{"claude-upstream", "gpt-upstream", "codex-upstream", "gemini-upstream"} {
		yaml += "  " + m + ": {input: 1, output: 2}\n"
	}
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := config.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(engine.Options{Config: src})
	srv := eng.NewServer(eng.Handler(nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(listen.Listener(ln)) // as ccload serve does
	defer srv.Shutdown()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	dialed := false
	hc := &fasthttp.HostClient{Addr: ln.Addr().String(), MaxConns: 1, Dial: func(string) (net.Conn, error) {
		if dialed {
			return nil, fmt.Errorf("the one connection was closed")
		}
		dialed = true
		return conn, nil
	}}

	debug.SetMaxStack(8 << 10)
	const text = "Hello from the ccload mock"
	calls := []struct{ path, body, want string }{
		{"/v1/messages", `{"model":"claude-client","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, text},
		{"/v1/messages", `{"model":"claude-client","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "message_stop"},
		{"/v1/chat/completions", `{"model":"gpt-client","messages":[{"role":"user","content":"hi"}]}`, text},
		{"/v1/chat/completions", `{"model":"gpt-client","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "[DONE]"},
		{"/v1/responses", `{"model":"codex-client","input":"hi"}`, text},
		{"/v1/responses", `{"model":"codex-client","stream":true,"input":"hi"}`, "response.completed"},
		{"/v1beta/models/gemini-client:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, text},
		{"/v1beta/models/gemini-client:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, "finishReason"},
	}
	served := 0
	for _, c := range calls {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.SetRequestURI("http://" + ln.Addr().String() + c.path)
		req.Header.SetMethod(fasthttp.MethodPost)
		req.Header.SetContentType("application/json")
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("x-goog-api-key", testToken)
		req.SetBodyString(c.body)
		err := hc.DoTimeout(req, resp, 10*time.Second)
		if err != nil || resp.StatusCode() != 200 || !bytes.Contains(resp.Body(), []byte(c.want)) {
			t.Fatalf("%s %s: err=%v status=%d body=%.300s", c.path, c.body, err, resp.StatusCode(), resp.Body())
		}
		fasthttp.ReleaseRequest(req)
		fasthttp.ReleaseResponse(resp)
		served++
	}
	fmt.Printf("requests served in 8 KiB stacks: %d\n", served)
}

// overflowTrace is the stack of the goroutine that overflowed, from the
// child's crash output, or its last lines when it did not crash that way.
func overflowTrace(out []byte) string {
	s := string(out)
	i := strings.Index(s, "stack exceeds")
	if i < 0 {
		return tailLines(out, 40)
	}
	s = s[i:]
	if j := strings.Index(s, "[running]:"); j >= 0 {
		if k := strings.Index(s[j:], "\n\n"); k >= 0 {
			s = s[:j+k]
		}
	}
	return s
}

// tailLines is the last n lines of out.
func tailLines(out []byte, n int) string {
	lines := strings.Split(string(out), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
