package engine_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/store"
)

// Plain http:// upstreams go through ccload's HTTP/1.1 client, everything else
// through net/http (engine.Options.Transport forces it here, as a proxy or
// https would). Both must answer, stream, time out and retry the same way,
// and both follow the engine's clock: the slow first byte times out when a
// fake clock passes first_byte (2 minutes), with no waiting.
func TestUpstreamClientsBehaveAlike(t *testing.T) {
	for _, name := range []string{"fasthttp", "net/http"} {
		t.Run(name, func(t *testing.T) {
			var rt http.RoundTripper
			if name == "net/http" {
				rt = http.DefaultTransport.(*http.Transport).Clone()
			}
			var slowSeen atomic.Bool
			m, u := startMock(t, mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
				rep := mockupstream.DefaultReply(r)
				if r.Model == "slow" {
					slowSeen.Store(true)
					rep.FirstByteDelay = time.Minute // ends when the gateway gives up on it
				}
				return rep
			}})
			clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			yaml := strings.NewReplacer("{{URL}}", u, "first_byte: 300ms", "first_byte: 2m").Replace(clientsConfig)
			url := startWithOptions(t, yaml, engine.Options{Transport: rt, Clock: clk})
			h := map[string]string{"x-api-key": testToken, "anthropic-version": "2023-06-01", "anthropic-beta": "b1"}

			resp, body := post(t, url+"/v1/messages", `{"model":"m1","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, h)
			if resp.StatusCode != 200 || !strings.Contains(body, mockupstream.DefaultText) {
				t.Fatalf("non-stream: %d %s", resp.StatusCode, body)
			}
			resp, body = post(t, url+"/v1/messages", `{"model":"m1","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, h)
			if resp.StatusCode != 200 || !strings.Contains(body, "message_stop") {
				t.Fatalf("stream: %d %s", resp.StatusCode, body)
			}
			rec := m.Requests()
			if len(rec) != 2 || rec[0].Key != "upstream-key-0001" || rec[0].Header.Get("anthropic-beta") != "b1" ||
				rec[0].Header.Get("x-api-key") != "upstream-key-0001" || rec[1].Header.Get("Accept") != "text/event-stream" {
				t.Fatalf("upstream saw %+v", rec)
			}

			go func() {
				for !slowSeen.Load() || clk.Timers() == 0 {
					runtime.Gosched()
				}
				clk.Advance(2 * time.Minute)
			}()
			resp, body = post(t, url+"/v1/messages", `{"model":"slow","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, h)
			if resp.StatusCode != 504 || !strings.Contains(body, "timeout") {
				t.Fatalf("slow first byte: %d %s", resp.StatusCode, body)
			}
		})
	}
}

// An upstream that closes an idle keep-alive connection must not fail the
// next request that picks it from the pool: fasthttp resends once, as
// net/http does.
func TestFastUpstreamResendsOnStaleKeepAlive(t *testing.T) {
	body := `{"id":"msg_1","type":"message","role":"assistant","model":"m1","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`
	served := make(chan struct{}, 8)
	// Answer keep-alive, then close at once: the connection goes back to
	// the client's pool already dead.
	up := rawUpstream(t, func(c net.Conn) {
		if answering(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body) {
			served <- struct{}{}
		}
	})
	url := startWithOptions(t, strings.ReplaceAll(clientsConfig, "{{URL}}", up), engine.Options{})
	h := map[string]string{"x-api-key": testToken}
	for i := range 3 {
		resp, got := post(t, url+"/v1/messages", `{"model":"m1","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, h)
		if resp.StatusCode != 200 || !strings.Contains(got, `"text":"ok"`) {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, got)
		}
		<-served
	}
}

const clientsConfig = `version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: ":memory:"}
routing:
  timeouts: {first_byte: 300ms}
  max_attempts: 1
channels:
  - name: a
    urls: [{url: "{{URL}}", protocols: [anthropic]}]
    keys: [upstream-key-0001]
    models: [m1, slow]
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
`

// startWithOptions serves yaml with the given engine options (Transport
// nil: the engine's own choice of client) and returns the gateway's base
// URL; Config and Logs are filled in.
func startWithOptions(t *testing.T, yaml string, opts engine.Options) string {
	t.Helper()
	file := t.TempDir() + "/ccload.yaml"
	yaml = strings.ReplaceAll(yaml, "{{TOKEN_SHA}}", sha256hex(testToken))
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := config.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), "sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	logs := store.NewWriter(st, store.WriterOptions{})
	opts.Config, opts.Logs = src, logs
	eng := engine.New(opts)
	srv := &fasthttp.Server{Handler: eng.Handler(nil), ErrorHandler: eng.ErrorHandler}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Shutdown()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		logs.Close(ctx)
		st.Close()
		for _, e := range eng.Cooldowns().List() {
			if e.Key.Scope == failure.ScopeURL && e.Kind != failure.KindTimeout {
				t.Errorf("URL cooled by %s: %+v", e.Kind, e)
			}
		}
	})
	return "http://" + ln.Addr().String()
}
