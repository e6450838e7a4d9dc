//go:build no_webui

package webui

import (
	"strings"

	"github.com/valyala/fasthttp"
)

// Embedded reports whether this binary carries the dashboard.
const Embedded = false

const nonePage = "<!doctype html><meta charset=utf-8><title>ccload</title>" +
	"<p>This ccload was built without the dashboard (build tag no_webui); the admin API is at /admin/.</p>\n"

// Handler answers "/", /web and everything under /web/ with a one-line
// page saying that the dashboard was left out of this build, and reports
// whether it did; other paths are left to the caller.
func Handler(ctx *fasthttp.RequestCtx) bool {
	p := string(ctx.Path())
	if p != "/" && p != "/web" && !strings.HasPrefix(p, Prefix) {
		return false
	}
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetStatusCode(fasthttp.StatusNotFound)
	ctx.SetBodyString(nonePage)
	return true
}
