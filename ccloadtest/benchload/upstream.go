package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// shape is what the mock answers for one benchmark model: words of text
// (one stream event each) and the pause between stream events.
type shape struct {
	model string
	words int
	delay time.Duration
}

var (
	shapeJSON   = shape{model: "bench-json", words: 120}                                  // ~1 KB JSON answer
	shapeSSE    = shape{model: "bench-sse20", words: 20}                                  // 20 content events, no pause
	shapeSlow   = shape{model: "bench-slow200", words: 200, delay: 50 * time.Millisecond} // ~10 s
	shapeSlow1s = shape{model: "bench-slow20", words: 20, delay: time.Second}             // ~25 s
)

func benchModels() []string {
	return []string{shapeJSON.model, shapeSSE.model, shapeSlow.model, shapeSlow1s.model}
}

func shapeOf(model string) (shape, bool) {
	for _, s := range []shape{shapeJSON, shapeSSE, shapeSlow, shapeSlow1s} {
		if s.model == model {
			return s, true
		}
	}
	return shape{}, false
}

// text is the answer of a shape: words "w1".."wN" padded to six bytes, so
// every response can be checked for all of them.
func (s shape) text() string {
	var b strings.Builder
	for i := 1; i <= s.words; i++ {
		if i > 1 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "w%05d", i)
	}
	return b.String()
}

// serveUpstream is the mock upstream process: the project's mock with a
// script that answers each benchmark model in its shape, on plain http or
// behind TLS with the certificate in dir (mode).
func serveUpstream(addr string, mode upstreamMode, dir string) {
	texts := map[string]string{}
	for _, m := range benchModels() {
		s, _ := shapeOf(m)
		texts[m] = s.text()
	}
	m := mockupstream.New(mockupstream.Options{
		MaxRecorded: 1,
		Script: func(r *mockupstream.Recorded) mockupstream.Reply {
			s, ok := shapeOf(r.Model)
			if !ok {
				return mockupstream.Reply{Status: 400, Text: "benchload: unknown model " + r.Model}
			}
			rep := mockupstream.Reply{Text: texts[s.model], EventDelay: s.delay}
			if r.Stream {
				// What an SSE server sends so that nginx passes each event
				// at once while it still buffers plain responses.
				rep.Header = map[string]string{"X-Accel-Buffering": "no"}
			}
			return rep
		},
	})
	if !mode.tls() {
		if _, err := m.Start(addr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		waitSignal()
		_ = m.Close() // exiting anyway
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	if mode == modeHTTPSH1 {
		// A non-nil empty map keeps net/http from offering h2 in ALPN.
		srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	go func() {
		err := srv.ServeTLS(ln, filepath.Join(dir, certFile), filepath.Join(dir, keyFile))
		if !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}()
	waitSignal()
	_ = srv.Close() // exiting anyway
}

func waitSignal() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
}
