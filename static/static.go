// Package static holds cronsheet's web pages, embedded in the binary. The
// pages are ours; Bootstrap, jQuery and DataTables are copied into vendor/ from
// node_modules by `make static` (they are not committed), so a fresh clone
// builds and tests before npm has run, with pages that lack their scripts.
// Such a binary serves its API but not its pages: [Missing] tells, and
// [Unavailable] is what it answers on the pages instead (503).
package static

import (
	"embed"
	"html"
	"io/fs"
	"net/http"
	"strings"
)

// FS holds the pages (index.html, targets.html, runs.html, status.html,
// outbox.html, flows.html, login.html, apidocs.html), their scripts
// (app.js, common.js, session.js, theme.js, targets.js, runs.js, status.js,
// outbox.js, flows.js, login.js, apidocs.js) and style, the table page's modules (app/, started by app.js)
// and the modules the pages share (lib/), and vendor/. No page has an
// inline script.
//
//go:embed *.html *.js *.css app lib vendor
var FS embed.FS

// Vendor lists the third-party files the pages load from vendor/.
func Vendor() []string {
	return []string{
		"vendor/jquery.min.js",
		"vendor/bootstrap.min.css",
		"vendor/bootstrap.bundle.min.js",
		"vendor/dataTables.min.js",
		"vendor/dataTables.bootstrap5.min.js",
		"vendor/dataTables.bootstrap5.min.css",
		"vendor/zh.json",
		"vendor/dataTables.keyTable.min.js",
		"vendor/keyTable.bootstrap5.min.css",
		"vendor/dataTables.select.min.js",
		"vendor/select.bootstrap5.min.css",
		"vendor/dataTables.autoFill.min.js",
		"vendor/autoFill.bootstrap5.min.css",
		"vendor/dataTables.colReorder.min.js",
		"vendor/colReorder.bootstrap5.min.css",
		"vendor/dataTables.fixedHeader.min.js",
		"vendor/fixedHeader.bootstrap5.min.css",
		"vendor/uPlot.iife.min.js",
		"vendor/uPlot.min.css",
		"vendor/swagger-ui-bundle.js",
		"vendor/swagger-ui.css",
	}
}

// Missing returns the files of [Vendor] that fsys (normally [FS]) lacks or
// holds empty, in Vendor's order: all of them in a binary built by a bare
// `go build` on a fresh clone, without `make static`. It returns nil when
// none is missing.
func Missing(fsys fs.FS) []string {
	var out []string
	for _, f := range Vendor() {
		if st, err := fs.Stat(fsys, f); err != nil || st.Size() == 0 {
			out = append(out, f)
		}
	}
	return out
}

// Unavailable returns the handler that answers every page and asset
// request of a binary whose pages lack the vendored files missing: 503
// Service Unavailable with a short HTML page (no script, no asset) that
// names them and says how to build a binary that has them. The API is not
// affected.
func Unavailable(missing []string) http.Handler {
	var items strings.Builder
	for _, f := range missing {
		items.WriteString("<li><code>static/" + html.EscapeString(f) + "</code></li>\n")
	}
	page := `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>cronsheet: web pages unavailable</title></head>
<body>
<h1>The web pages are unavailable</h1>
<p>This cronsheet binary was built without its vendored browser files
(a bare <code>go build</code> instead of <code>make build</code>), so its
pages cannot work. Missing:</p>
<ul>
` + items.String() + `</ul>
<p>Rebuild with <code>make build</code> (it runs <code>make static</code>:
<code>npm ci</code>, then copies jQuery and DataTables into
<code>static/vendor/</code> before <code>go build</code>). The API under
<code>/api/v1/</code>, <code>/healthz</code> and <code>/metrics</code> work
meanwhile.</p>
</body>
</html>
`
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(page))
	})
}
