//go:build !no_webui

package webui

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// get runs Handler on one request and returns the response.
func get(t *testing.T, method, uri string, header map[string]string) (*fasthttp.Response, bool) {
	t.Helper()
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod(method)
	ctx.Request.SetRequestURI(uri)
	for k, v := range header {
		ctx.Request.Header.Set(k, v)
	}
	ok := Handler(&ctx)
	resp := &fasthttp.Response{}
	ctx.Response.CopyTo(resp)
	return resp, ok
}

func TestIndexEmbedded(t *testing.T) {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		t.Fatalf("dist/index.html is not embedded: %v", err)
	}
	if !bytes.Contains(b, []byte(`src="/web/js/app.js" type="module"`)) {
		t.Fatalf("index.html does not load the app module:\n%s", b)
	}
}

func TestServesIndexAsHTML(t *testing.T) {
	for _, uri := range []string{"/web/", "/web/logs", "/web/channels?x=1"} {
		resp, ok := get(t, "GET", uri, nil)
		if !ok || resp.StatusCode() != 200 {
			t.Fatalf("GET %s: handled %v, status %d", uri, ok, resp.StatusCode())
		}
		if ct := string(resp.Header.ContentType()); ct != "text/html; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", uri, ct)
		}
		if !bytes.Contains(resp.Body(), []byte("<title>ccload</title>")) {
			t.Errorf("GET %s: not index.html", uri)
		}
		for _, h := range []string{"Content-Security-Policy", "X-Content-Type-Options", "ETag", "Cache-Control"} {
			if len(resp.Header.Peek(h)) == 0 {
				t.Errorf("GET %s: no %s header", uri, h)
			}
		}
	}
}

func TestAssetsAndErrors(t *testing.T) {
	cases := []struct {
		method, uri string
		status      int
		ctype       string
	}{
		{"GET", "/web/js/app.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/web/js/pages/logs.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/web/css/app.css", 200, "text/css; charset=utf-8"},
		{"GET", "/web/vendor/uPlot.min.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/web/favicon.svg", 200, "image/svg+xml"},
		{"GET", "/web/js/nope.js", 404, ""},
		{"GET", "/web/go.mod", 404, ""},
		{"POST", "/web/", 405, ""},
	}
	for _, c := range cases {
		resp, ok := get(t, c.method, c.uri, nil)
		if !ok || resp.StatusCode() != c.status {
			t.Errorf("%s %s: handled %v, status %d, want %d", c.method, c.uri, ok, resp.StatusCode(), c.status)
			continue
		}
		if c.ctype != "" && string(resp.Header.ContentType()) != c.ctype {
			t.Errorf("%s %s: Content-Type %q, want %q", c.method, c.uri, resp.Header.ContentType(), c.ctype)
		}
	}
}

func TestRedirectsAndOtherPaths(t *testing.T) {
	for _, uri := range []string{"/", "/web"} {
		resp, ok := get(t, "GET", uri, nil)
		if !ok || resp.StatusCode() != 302 || !strings.HasSuffix(string(resp.Header.Peek("Location")), "/web/") {
			t.Errorf("GET %s: handled %v, %d to %q; want a redirect to /web/", uri, ok, resp.StatusCode(), resp.Header.Peek("Location"))
		}
	}
	for _, uri := range []string{"/admin/status", "/v1/messages", "/webhook", "/health"} {
		if _, ok := get(t, "GET", uri, nil); ok {
			t.Errorf("GET %s: handled, want it left to the caller", uri)
		}
	}
}

func TestVersionedAssets(t *testing.T) {
	resp, _ := get(t, "GET", "/web/", nil)
	ref := regexp.MustCompile(`src="(/web/_/[0-9a-f]{12}/js/app\.js)"`).FindSubmatch(resp.Body())
	if ref == nil {
		t.Fatalf("index.html does not load app.js from the versioned tree:\n%s", resp.Body())
	}
	resp, _ = get(t, "GET", string(ref[1]), nil)
	if resp.StatusCode() != 200 || string(resp.Header.Peek("Cache-Control")) != "public, max-age=31536000, immutable" {
		t.Errorf("GET %s: %d, Cache-Control %q", ref[1], resp.StatusCode(), resp.Header.Peek("Cache-Control"))
	}
	// A page of an older version still gets the files, revalidated.
	resp, _ = get(t, "GET", "/web/_/000000000000/js/lib.js", nil)
	if resp.StatusCode() != 200 || string(resp.Header.Peek("Cache-Control")) != "no-cache" {
		t.Errorf("old version: %d, Cache-Control %q", resp.StatusCode(), resp.Header.Peek("Cache-Control"))
	}
	for _, uri := range []string{"/web/_/" + files().version + "/index.html", "/web/_/" + files().version + "/nope.js", "/web/_/" + files().version + "/logs"} {
		if resp, _ := get(t, "GET", uri, nil); resp.StatusCode() != 404 {
			t.Errorf("GET %s: %d, want 404", uri, resp.StatusCode())
		}
	}
}

func TestCachingAndCompression(t *testing.T) {
	resp, _ := get(t, "GET", "/web/js/lib.js", nil)
	plain := append([]byte(nil), resp.Body()...)
	etag := string(resp.Header.Peek("ETag"))
	if etag == "" || string(resp.Header.Peek("Cache-Control")) != "no-cache" {
		t.Fatalf("ETag %q, Cache-Control %q", etag, resp.Header.Peek("Cache-Control"))
	}
	resp, _ = get(t, "GET", "/web/js/lib.js", map[string]string{"If-None-Match": etag})
	if resp.StatusCode() != 304 || len(resp.Body()) != 0 {
		t.Errorf("If-None-Match: status %d with %d bytes, want 304 without a body", resp.StatusCode(), len(resp.Body()))
	}
	resp, _ = get(t, "GET", "/web/js/lib.js", map[string]string{"Accept-Encoding": "gzip, br"})
	if string(resp.Header.Peek("Content-Encoding")) != "gzip" {
		t.Fatalf("Accept-Encoding gzip: Content-Encoding %q", resp.Header.Peek("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(resp.Body()))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(zr)
	if !bytes.Equal(unzipped, plain) || len(resp.Body()) >= len(plain) {
		t.Errorf("gzip body: %d bytes, unzips to %d bytes, plain %d", len(resp.Body()), len(unzipped), len(plain))
	}
}

// TestReferencesResolve checks that every file index.html and the modules
// point at is in dist/, so a fresh clone serves a complete app.
func TestReferencesResolve(t *testing.T) {
	abs := regexp.MustCompile(`(?:src|href)="/web/(?:_/[0-9a-f]+/)?([^"?#]+)"`)
	rel := regexp.MustCompile(`(?m)^import\b[^'"]*['"](\.{1,2}/[^'"]+)['"]`)
	n := 0
	for p := range files().files {
		b := files().files[p].body
		switch path.Ext(p) {
		case ".html":
			for _, m := range abs.FindAllSubmatch(b, -1) {
				if path.Ext(string(m[1])) == "" {
					continue // a page of the app, served as index.html
				}
				n++
				if files().files[string(m[1])] == nil {
					t.Errorf("%s refers to /web/%s, which dist/ lacks", p, m[1])
				}
			}
		case ".js":
			for _, m := range rel.FindAllSubmatch(b, -1) {
				n++
				target := path.Join(path.Dir(p), string(m[1]))
				if files().files[target] == nil {
					t.Errorf("%s imports %s (%s), which dist/ lacks", p, m[1], target)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("found only %d references; the patterns no longer match the files", n)
	}
}
