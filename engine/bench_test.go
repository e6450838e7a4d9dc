package engine_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/internal/gcfloor"
	"github.com/ccload/ccload/store"
)

// The request path, one proxied request per iteration: client -> gateway
// (in-memory listener) -> upstream (a fasthttp server on loopback answering
// fixed bytes) and back, SQLite logging included. allocs/op counts the
// whole process, so the client and the upstream are fasthttp's, which
// allocate next to nothing per request. How to run and read them: docs/benchmarks.md.
//
//	go test -run '^$' -bench 'BenchmarkProxy' -benchmem ./engine/

const benchJSON = `{"id":"msg_1","type":"message","role":"assistant","model":"m1","content":[{"type":"text","text":"` +
	`Hello from the benchmark upstream. Hello from the benchmark upstream. Hello from the benchmark upstream."}],` +
	`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":21,"output_tokens":13}}`

func benchSSE() string {
	var b strings.Builder
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m1\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":21,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for range 20 {
		b.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" word\"}}\n\n")
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":20}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.String()
}

func BenchmarkProxyNonStream(b *testing.B) { benchProxy(b, false, nil) }

func BenchmarkProxyStream(b *testing.B) { benchProxy(b, true, nil) }

// An agent's request is mostly conversation: a long system prompt and many
// turns, hundreds of kilobytes, of which the gateway reads a few fields.
// This one is about 256 KB; what it costs over ProxyNonStream is what the
// gateway spends per byte of body.
func BenchmarkProxyNonStreamAgentBody(b *testing.B) {
	benchProxyBody(b, false, nil, agentBody())
}

func agentBody() string {
	var sb strings.Builder
	sb.WriteString(`{"model":"m1","max_tokens":64,"system":"`)
	sb.WriteString(strings.Repeat("You are a careful coding agent. ", 600))
	sb.WriteString(`","messages":[`)
	for i := range 120 {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`{"role":"` + role + `","content":[{"type":"text","text":"`)
		sb.WriteString(strings.Repeat("Here is some file content and a tool result line. ", 36))
		sb.WriteString(`"}]}`)
	}
	sb.WriteString(`],"metadata":{"user_id":"user_ab_account_x_session_bench"}}`)
	return sb.String()
}

// The same through net/http's client, which https upstreams and proxies
// use: the difference is what the fasthttp path saves.
func BenchmarkProxyNonStreamNetHTTP(b *testing.B) {
	benchProxy(b, false, http.DefaultTransport.(*http.Transport).Clone())
}

func BenchmarkProxyStreamNetHTTP(b *testing.B) {
	benchProxy(b, true, http.DefaultTransport.(*http.Transport).Clone())
}

func benchProxy(b *testing.B, stream bool, rt http.RoundTripper) {
	body := `{"model":"m1","max_tokens":64,"messages":[{"role":"user","content":"Say hello."}]}`
	if stream {
		body = `{"model":"m1","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Say hello."}]}`
	}
	benchProxyBody(b, stream, rt, body)
}

func benchProxyBody(b *testing.B, stream bool, rt http.RoundTripper, body string) {
	defer gcfloor.Start(gcfloor.Serve)() // as ccload serve runs
	sse := benchSSE()
	up := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if bytes.Contains(ctx.PostBody(), []byte(`"stream":true`)) {
			ctx.SetContentType("text/event-stream")
			ctx.SetBodyString(sse)
			return
		}
		ctx.SetContentType("application/json")
		ctx.SetBodyString(benchJSON)
	}}
	uln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go up.Serve(uln)
	defer up.Shutdown()

	dir := b.TempDir()
	file := filepath.Join(dir, "ccload.yaml")
	yaml := `version: 1
server: {admin_password: bench}
storage: {driver: sqlite, dsn: "` + filepath.Join(dir, "ccload.db") + `"}
channels:
  - name: a
    urls: [{url: "http://` + uln.Addr().String() + `", protocols: [anthropic]}]
    keys: [upstream-key-0001]
    models: [m1]
tokens:
  - name: bench
    token_sha256: "` + sha256hex(testToken) + `"
pricing:
  m1: {input: 1, output: 2}
`
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		b.Fatal(err)
	}
	src, err := config.Open(file)
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(context.Background(), "sqlite", src.Current().Storage.DSN.Reveal())
	if err != nil {
		b.Fatal(err)
	}
	logs := store.NewWriter(st, store.WriterOptions{})
	eng := engine.New(engine.Options{Config: src, Logs: logs, Transport: rt})
	gw := &fasthttp.Server{Handler: eng.Handler(nil)}
	ln := fasthttputil.NewInmemoryListener()
	go gw.Serve(ln)
	defer func() {
		gw.Shutdown()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		logs.Close(ctx)
		st.Close()
	}()

	client := &fasthttp.HostClient{Addr: "gateway", Dial: func(string) (net.Conn, error) { return ln.Dial() }}
	want := "Hello from the benchmark upstream."
	if stream {
		want = "message_stop"
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	req.SetRequestURI("http://gateway/v1/messages")
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	req.Header.Set("x-api-key", testToken)
	req.Header.Set("anthropic-version", "2023-06-01")
	req.SetBodyString(body)
	do := func() {
		if err := client.Do(req, resp); err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode() != 200 || !strings.Contains(string(resp.Body()), want) {
			b.Fatalf("status %d: %s", resp.StatusCode(), resp.Body())
		}
	}
	for range 50 { // warm pools and connections
		do()
	}
	b.ReportAllocs()
	cpu0 := processCPU(b)
	b.ResetTimer()
	for range b.N {
		do()
	}
	b.StopTimer()
	// CPU time of the whole process (gateway, upstream, client, log
	// writer) per request: on a shared machine ns/op is mostly waiting
	// for a core, this is what the request cost.
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
