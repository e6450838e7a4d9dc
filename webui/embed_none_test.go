//go:build no_webui

package webui

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestNoWebUIPage(t *testing.T) {
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/web/")
	if !Handler(&ctx) || !strings.Contains(string(ctx.Response.Body()), "built without the dashboard") {
		t.Fatalf("GET /web/: %q", ctx.Response.Body())
	}
	var other fasthttp.RequestCtx
	other.Request.SetRequestURI("/admin/status")
	if Handler(&other) {
		t.Fatal("GET /admin/status: handled, want it left to the caller")
	}
}
