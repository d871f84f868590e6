package static

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestMissing(t *testing.T) {
	full := fstest.MapFS{}
	for _, f := range Vendor() {
		full[f] = &fstest.MapFile{Data: []byte("x")}
	}
	if got := Missing(full); got != nil {
		t.Errorf("Missing(every file) = %v, want nil", got)
	}
	// A fresh clone's vendor/ holds only its README.
	fresh := fstest.MapFS{"vendor/README.md": {Data: []byte("readme")}, "index.html": {Data: []byte("<html>")}}
	if got := Missing(fresh); !slices.Equal(got, Vendor()) {
		t.Errorf("Missing(fresh clone) = %v, want all of %v", got, Vendor())
	}
	partial := fstest.MapFS{
		"vendor/jquery.min.js":                  {Data: []byte("x")},
		"vendor/bootstrap.min.css":              {Data: []byte("x")},
		"vendor/bootstrap.bundle.min.js":        {Data: []byte("x")},
		"vendor/dataTables.min.js":              {Data: nil}, // an empty copy counts as missing
		"vendor/dataTables.bootstrap5.min.js":   {Data: []byte("x")},
		"vendor/zh.json":                        {Data: []byte("{}")},
		"vendor/dataTables.keyTable.min.js":     {Data: []byte("x")},
		"vendor/keyTable.bootstrap5.min.css":    {Data: []byte("x")},
		"vendor/dataTables.select.min.js":       {Data: []byte("x")},
		"vendor/select.bootstrap5.min.css":      {Data: []byte("x")},
		"vendor/dataTables.autoFill.min.js":     {Data: []byte("x")},
		"vendor/autoFill.bootstrap5.min.css":    {Data: []byte("x")},
		"vendor/dataTables.colReorder.min.js":   {Data: []byte("x")},
		"vendor/colReorder.bootstrap5.min.css":  {Data: []byte("x")},
		"vendor/dataTables.fixedHeader.min.js":  {Data: []byte("x")},
		"vendor/fixedHeader.bootstrap5.min.css": {Data: []byte("x")},
		"vendor/uPlot.iife.min.js":              {Data: []byte("x")},
		"vendor/uPlot.min.css":                  {Data: []byte("x")},
		"vendor/swagger-ui-bundle.js":           {Data: []byte("x")},
		"vendor/swagger-ui.css":                 {Data: []byte("x")},
	}
	if got, want := Missing(partial), []string{"vendor/dataTables.min.js", "vendor/dataTables.bootstrap5.min.css"}; !slices.Equal(got, want) {
		t.Errorf("Missing(partial) = %v, want %v", got, want)
	}
	// The embedded FS is checked the same way; what it holds depends on
	// whether `make static` ran, so only consistency is asserted here.
	for _, f := range Missing(FS) {
		if st, err := fs.Stat(FS, f); err == nil && st.Size() > 0 {
			t.Errorf("Missing(FS) names %s, which FS holds", f)
		}
	}
}

func TestUnavailable(t *testing.T) {
	missing := []string{"vendor/jquery.min.js", "vendor/<odd>.js"}
	rec := httptest.NewRecorder()
	Unavailable(missing).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/targets", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("status = %d, want 503", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q, want text/html", ct)
	}
	body := rec.Body.String()
	for _, want := range []string{"static/vendor/jquery.min.js", "static/vendor/&lt;odd&gt;.js", "make build", "make static", "/api/v1/"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<script") || strings.Contains(body, "<odd>") {
		t.Errorf("page has a script or an unescaped name:\n%s", body)
	}
}
