package authapi_test

import (
	"net/http"
	"strings"
	"testing"

	"cronsheet/task"
)

// TestGuardForbiddenPageIsHTML: a page the role may not open answers a
// browser (Accept: text/html) with a sentence in an HTML page, in the
// browser's language; an API call keeps the JSON error.
func TestGuardForbiddenPageIsHTML(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, nil)
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	for _, tc := range []struct{ lang, want string }{
		{"en-US,en;q=0.9", "This page needs the admin role; you are signed in as editor-user (editor)."},
		{"zh-CN,zh;q=0.9", "此页面需要管理员角色；你当前以 editor-user（编辑者）登录。"},
	} {
		h := bearer(b.tokens[task.RoleEditor])
		h["Accept"], h["Accept-Language"] = browser, tc.lang
		rec := b.send(t, req{method: "GET", path: "/users", headers: h})
		body := rec.Body.String()
		if rec.Code != http.StatusForbidden || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			t.Fatalf("%s: GET /users: %d %q, want 403 text/html", tc.lang, rec.Code, rec.Header().Get("Content-Type"))
		}
		if !strings.Contains(body, `<p id="forbidden">`+tc.want+"</p>") || strings.Contains(body, `"error"`) {
			t.Errorf("%s: body %s lacks the sentence %q", tc.lang, body, tc.want)
		}
		if rec.Header().Get("Content-Security-Policy") == "" {
			t.Errorf("%s: the page lacks the security headers", tc.lang)
		}
	}
	// A script's call (no text/html) and the API keep their JSON.
	for _, path := range []string{"/users", "/api/v1/users"} {
		h := bearer(b.tokens[task.RoleViewer])
		h["Accept"] = "application/json"
		rec := b.send(t, req{method: "GET", path: path, headers: h})
		if rec.Code != http.StatusForbidden || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") ||
			!strings.Contains(rec.Body.String(), "needs role admin") {
			t.Errorf("GET %s as JSON: %d %q %s", path, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
		}
	}
	// A page the role may open is served as ever.
	h := bearer(b.tokens[task.RoleViewer])
	h["Accept"] = browser
	if rec := b.send(t, req{method: "GET", path: "/jobs", headers: h}); rec.Code != http.StatusOK {
		t.Errorf("GET /jobs as a viewer: %d", rec.Code)
	}
}
