package admin

import (
	"net/http"
	"net/http/pprof"
	"strings"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// pprofPrefix is where the Go runtime profiles are served when
// server.pprof is on. They sit under /admin so that the admin password
// guards them: a profile shows code paths and, for heap and goroutine
// dumps, values in memory.
const pprofPrefix = "/admin/debug/pprof/"

// pprofEndpoint matches GET /admin/debug/pprof/{name}.
func pprofEndpoint(path string) (endpoint, bool) {
	if path+"/" == pprofPrefix || strings.HasPrefix(path, pprofPrefix) {
		return endpoint{method: fasthttp.MethodGet, h: (*Server).servePprof}, true
	}
	return endpoint{}, false
}

// servePprof serves net/http/pprof's handlers by name: profile (CPU, with
// ?seconds=N), trace, heap, allocs, goroutine, block, mutex, threadcreate,
// cmdline, symbol, and the index. Off unless server.pprof is true.
func (s *Server) servePprof(ctx *fasthttp.RequestCtx) error {
	if !s.cfg.Current().Server.Pprof {
		return errNotFound("profiling is off; set server.pprof: true to serve " + pprofPrefix)
	}
	name := strings.TrimPrefix(strings.TrimPrefix(string(ctx.Path()), pprofPrefix[:len(pprofPrefix)-1]), "/")
	var h http.HandlerFunc
	switch name {
	case "":
		h = pprofIndex
	case "profile":
		h = pprof.Profile
	case "trace":
		h = pprof.Trace
	case "cmdline":
		h = pprof.Cmdline
	case "symbol":
		h = pprof.Symbol
	default:
		h = pprof.Handler(name).ServeHTTP // an unknown name is pprof's own 404
	}
	fasthttpadaptor.NewFastHTTPHandlerFunc(h)(ctx)
	return nil
}

// pprofIndex is pprof.Index, which reads names under /debug/pprof/ only.
func pprofIndex(w http.ResponseWriter, r *http.Request) {
	r.URL.Path = "/debug/pprof/"
	pprof.Index(w, r)
}
