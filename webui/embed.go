//go:build !no_webui

package webui

import (
	"embed"
	"io/fs"
	"sync"

	"github.com/valyala/fasthttp"
)

// dist holds the dashboard as served. "all:" keeps files whose names start
// with "." or "_" too, so a file added there is never silently left out.
//
//go:embed all:dist
var dist embed.FS

// Embedded reports whether this binary carries the dashboard.
const Embedded = true

// files is built (every asset compressed) on the first dashboard request,
// not at start: a gateway nobody opens the dashboard of does not hold the
// compressed copies, nor the memory compressing them touched.
var files = sync.OnceValue(mustSite)

func mustSite() *site {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err)
	}
	s, err := newSite(sub)
	if err != nil {
		panic(err) // dist/ is embedded at build time: only a broken checkout gets here
	}
	return s
}

// Handler serves "/" (a redirect to /web/), /web and everything under
// /web/, and reports whether it did; other paths are left to the caller.
func Handler(ctx *fasthttp.RequestCtx) bool { return files().serve(ctx) }
