package main

import (
	"bufio"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// serveFloor runs the "gofloor" target: the least a reverse proxy built on
// ccload's own stack can cost. A fasthttp server hands each request to a
// fasthttp HostClient and streams the answer back, flushing every chunk as
// ccload does for SSE, with nothing else: no auth, routing, conversion,
// logging or metrics. ccload/gofloor is then what ccload's own work costs
// over its stack, and gofloor/nginx what Go and fasthttp cost over nginx.
// An https:// upstream is reached over TLS (http/1.1, the only protocol
// fasthttp's client speaks).
func serveFloor(listen, upstream string) {
	addr, isTLS := strings.CutPrefix(upstream, "https://")
	addr = strings.TrimPrefix(addr, "http://")
	hc := &fasthttp.HostClient{
		Addr:                addr,
		IsTLS:               isTLS,
		MaxConns:            1 << 16,
		StreamResponseBody:  true,
		MaxIdleConnDuration: time.Minute,
	}
	srv := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			if string(ctx.Path()) == "/health" {
				ctx.SetBodyString("ok")
				return
			}
			req := fasthttp.AcquireRequest()
			ctx.Request.CopyTo(req)
			if isTLS {
				req.URI().SetScheme("https")
			}
			resp := fasthttp.AcquireResponse()
			err := hc.Do(req, resp)
			fasthttp.ReleaseRequest(req)
			if err != nil {
				fasthttp.ReleaseResponse(resp)
				ctx.Error(err.Error(), http.StatusBadGateway)
				return
			}
			resp.Header.CopyTo(&ctx.Response.Header)
			if !resp.IsBodyStream() {
				ctx.SetBody(resp.Body())
				fasthttp.ReleaseResponse(resp)
				return
			}
			body := resp.BodyStream()
			ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
				defer fasthttp.ReleaseResponse(resp)
				buf := make([]byte, 4096)
				for {
					n, err := body.Read(buf)
					if n > 0 {
						if _, werr := w.Write(buf[:n]); werr != nil || w.Flush() != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			})
		},
		ReduceMemoryUsage: true,
		Concurrency:       1 << 16,
	}
	go func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		<-ch
		srv.Shutdown()
	}()
	if err := srv.ListenAndServe(listen); err != nil {
		os.Exit(1)
	}
}
