package webtable_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gin-gonic/gin"

	"cronsheet/static"
	"cronsheet/webtable"
)

func TestPages(t *testing.T) {
	t.Parallel()
	r := gin.New()
	webtable.NewPages(static.FS).Register(r)
	tests := []struct {
		path, wantType, wantBody string
		wantCode                 int
	}{
		{"/", "text/html", "<table id=\"rows\"", 200},
		{"/outbox", "text/html", "outbox", 200},
		{"/targets", "text/html", "<table id=\"targets\"", 200},
		{"/runs", "text/html", "<table id=\"runs-table\"", 200},
		{"/status", "text/html", "<dl id=\"status-summary\"", 200},
		{"/flows", "text/html", "<svg id=\"flow-graph\"", 200},
		{"/assets/flows.js", "javascript", "/api/v1/flows", 200},
		{"/assets/common.js", "javascript", "cronsheetUI", 200},
		{"/assets/targets.js", "javascript", "/api/v1/targets", 200},
		{"/assets/runs.js", "javascript", "/api/v1/runs", 200},
		{"/assets/status.js", "javascript", "/api/v1/status", 200},
		{"/assets/app.js", "javascript", "DataTable", 200},
		{"/assets/app.css", "text/css", "cell-error", 200},
		{"/assets/vendor/README.md", "", "make static", 200},
		{"/assets/nope.js", "", "", 404},
		{"/assets/../static.go", "", "", 404},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
		if rec.Code != tt.wantCode {
			t.Errorf("GET %s = %d, want %d", tt.path, rec.Code, tt.wantCode)
			continue
		}
		if !strings.Contains(rec.Header().Get("Content-Type"), tt.wantType) || !strings.Contains(rec.Body.String(), tt.wantBody) {
			t.Errorf("GET %s: type %q, body %.80q", tt.path, rec.Header().Get("Content-Type"), rec.Body.String())
		}
	}
	// A missing page is a 404, not a panic.
	r = gin.New()
	webtable.NewPages(fstest.MapFS{}).Register(r)
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("missing index: %d", rec.Code)
	}
}

func TestPagesLinkStatus(t *testing.T) {
	t.Parallel()
	r := gin.New()
	webtable.NewPages(static.FS).Register(r)
	for _, path := range []string{"/", "/targets", "/runs", "/outbox", "/status"} {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if !strings.Contains(rec.Body.String(), `<a href="/status"`) {
			t.Errorf("GET %s: the header does not link the status page", path)
		}
	}
}

// TestPagesHaveNoInlineScript: the guard's Content-Security-Policy allows
// scripts from this origin only, so no page may carry an inline script or
// an on* handler attribute; the sign-in page is served like the others.
func TestPagesHaveNoInlineScript(t *testing.T) {
	t.Parallel()
	pages, err := fs.Glob(static.FS, "*.html")
	if err != nil || len(pages) < 6 {
		t.Fatalf("pages = %v, %v", pages, err)
	}
	inline := regexp.MustCompile(`(?i)<script(\s[^>]*)?>|\son[a-z]+\s*=`)
	for _, p := range pages {
		b, err := fs.ReadFile(static.FS, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range inline.FindAllString(string(b), -1) {
			if !strings.Contains(m, "src=") {
				t.Errorf("%s has inline script: %q", p, m)
			}
		}
	}
	r := gin.New()
	webtable.NewPages(static.FS).Register(r)
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/login", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `id="login"`) {
		t.Errorf("GET /login: %d", rec.Code)
	}
}
