// Package static holds cronsheet's web pages, embedded in the binary. The
// pages are ours; jQuery and DataTables are copied into vendor/ from
// node_modules by `make static` (they are not committed), so a fresh clone
// builds and tests before npm has run, with pages that lack their scripts.
package static

import "embed"

// FS holds the pages (index.html, targets.html, runs.html, status.html,
// outbox.html, flows.html, login.html), their scripts (app.js, common.js,
// session.js, targets.js, runs.js, status.js, outbox.js, flows.js,
// login.js) and style, and vendor/. No page has an inline script.
//
//go:embed *.html *.js *.css vendor
var FS embed.FS

// Vendor lists the third-party files the pages load from vendor/.
func Vendor() []string {
	return []string{
		"vendor/jquery.min.js",
		"vendor/dataTables.min.js",
		"vendor/dataTables.dataTables.min.css",
	}
}
