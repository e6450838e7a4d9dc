// Package webui serves the embedded dashboard at /web/ (design §4).
//
// The dashboard is plain HTML, CSS and ES modules under dist/, committed as
// they are served: there is no build step, so `go build` on a fresh clone
// embeds it (STYLE practice 23). Its only third-party file, uPlot, is
// vendored into dist/vendor by webui/e2e/vendor.mjs. The pages read and act
// only through the admin API (/admin/...), with the admin session cookie;
// nothing here touches the config or the database.
//
// Build with -tags no_webui to leave the dashboard out (embed_none.go).
package webui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/valyala/fasthttp"
)

// Prefix is where the dashboard lives.
const Prefix = "/web/"

// contentTypes are the types of the files dist/ may hold; a file of any
// other extension is not served (fixed here rather than read from the
// system's mime tables, so every machine answers alike).
var contentTypes = map[string]string{
	".html":    "text/html; charset=utf-8",
	".js":      "text/javascript; charset=utf-8",
	".css":     "text/css; charset=utf-8",
	".svg":     "image/svg+xml",
	".png":     "image/png",
	".ico":     "image/x-icon",
	".json":    "application/json",
	".txt":     "text/plain; charset=utf-8",
	".LICENSE": "text/plain; charset=utf-8",
}

// csp allows only the dashboard's own files and the same-origin admin API:
// no inline script or style, no other origin, no framing.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// asset is one file, ready to send.
type asset struct {
	ctype string
	body  []byte
	gz    []byte // gzip of body; nil when it would not be smaller
	etag  string
}

// site is the dashboard's files by URL path under Prefix ("index.html",
// "js/app.js").
//
// Every file is also served under Prefix + "_/" + version + "/", where the
// version is a hash of all of dist/: index.html is rewritten at start to
// load its scripts and styles from there, and the modules import each other
// by relative paths, so the whole app comes from one versioned tree that
// the browser may keep without asking again (immutable). index.html itself
// is revalidated on every load, so an upgrade shows at once.
type site struct {
	files   map[string]*asset
	index   *asset
	version string
}

// assetRef matches the asset URLs of index.html (with a file extension;
// the links to the app's pages have none).
var assetRef = regexp.MustCompile(`((?:src|href)=")/web/([^"?#]+\.[A-Za-z0-9]+)"`)

// newSite reads every file of fsys once; requests never touch fsys, so a
// request path is only ever a map key (no path can escape dist/).
func newSite(fsys fs.FS) (*site, error) {
	s := &site{files: map[string]*asset{}}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ctype, ok := contentTypes[path.Ext(p)]
		if !ok {
			return nil
		}
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		s.files[p] = newAsset(ctype, body)
		return nil
	})
	if err != nil {
		return nil, err
	}
	idx := s.files["index.html"]
	if idx == nil {
		return nil, fmt.Errorf("webui: dist/index.html is missing")
	}
	paths := make([]string, 0, len(s.files))
	for p := range s.files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	h := sha256.New()
	for _, p := range paths {
		fmt.Fprintf(h, "%s %s\n", p, s.files[p].etag)
	}
	s.version = hex.EncodeToString(h.Sum(nil))[:12]
	s.index = newAsset(idx.ctype, assetRef.ReplaceAll(idx.body, []byte("${1}"+Prefix+"_/"+s.version+"/${2}\"")))
	s.files["index.html"] = s.index
	return s, nil
}

func newAsset(ctype string, body []byte) *asset {
	sum := sha256.Sum256(body)
	a := &asset{ctype: ctype, body: body, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	if strings.HasPrefix(ctype, "text/") || ctype == "image/svg+xml" || ctype == "application/json" {
		a.gz = gzipped(body)
	}
	return a
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	if buf.Len() >= len(b) {
		return nil
	}
	return buf.Bytes()
}

// serve answers "/" (a redirect), "/web" and everything under /web/, and
// reports whether the path was one of these. Paths of the app's pages
// (/web/, /web/logs, ...: no file extension) get index.html, whose script
// routes on the path; a missing file with an extension is a 404.
func (s *site) serve(ctx *fasthttp.RequestCtx) bool {
	p := string(ctx.Path())
	switch {
	case p == "/" || p == "/web":
		ctx.Redirect(Prefix, fasthttp.StatusFound)
		return true
	case !strings.HasPrefix(p, Prefix):
		return false
	}
	if !ctx.IsGet() && !ctx.IsHead() {
		ctx.Response.Header.Set("Allow", "GET, HEAD")
		ctx.Error("method not allowed", fasthttp.StatusMethodNotAllowed)
		return true
	}
	rel := strings.TrimPrefix(p, Prefix)
	cache := "no-cache"
	if v, ok := strings.CutPrefix(rel, "_/"); ok {
		ver, file, _ := strings.Cut(v, "/")
		if rel = file; ver == s.version {
			cache = "public, max-age=31536000, immutable"
		}
		// An older version's page gets today's file, revalidated.
		if a := s.files[rel]; a == nil || a == s.index {
			ctx.Error("not found", fasthttp.StatusNotFound)
			return true
		}
	}
	a := s.files[rel]
	if a == nil {
		if path.Ext(rel) != "" {
			ctx.Error("not found", fasthttp.StatusNotFound)
			return true
		}
		a = s.index
	}
	h := &ctx.Response.Header
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if a.ctype == contentTypes[".html"] {
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Frame-Options", "DENY")
	}
	// Unversioned paths (index.html, the app's pages) are revalidated on
	// each use: an unchanged file costs a 304 without a body.
	h.Set("Cache-Control", cache)
	h.Set("ETag", a.etag)
	h.Set("Vary", "Accept-Encoding")
	h.SetContentType(a.ctype)
	if match := ctx.Request.Header.Peek("If-None-Match"); len(match) > 0 && etagMatches(string(match), a.etag) {
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		ctx.Response.SkipBody = true
		return true
	}
	body := a.body
	if a.gz != nil && ctx.Request.Header.HasAcceptEncoding("gzip") {
		h.Set("Content-Encoding", "gzip")
		body = a.gz
	}
	ctx.SetBody(body) // for HEAD, fasthttp sends the length and skips the body
	return true
}

// etagMatches reads an If-None-Match list ("*", or tags, weak or not).
func etagMatches(header, etag string) bool {
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
