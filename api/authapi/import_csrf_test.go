package authapi_test

import (
	"net/http"
	"strings"
	"testing"

	"cronsheet/task"
)

// TestGuardImportCSRF: the CSV import takes only text/csv, so a cookie
// request a cross-site form or a "simple" fetch can send (text/plain,
// form-encoded, multipart) never imports, even with an Origin that
// passes; a cookie request with neither Origin nor Sec-Fetch-Site is
// refused whatever its type.
func TestGuardImportCSRF(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, nil)
	_, sess := b.login(t, "admin-user", testPassword)
	const path = "/api/v1/scenarios/memos/import"
	const same = "http://cron.example.com"
	csv := func(id string) string { return "memo_id,content,when\n" + id + ",t,daily 08:00\n" }
	tests := []struct {
		name    string
		headers map[string]string
		id      string
		want    int
	}{
		{"cookie text/plain", cookie(sess, "Content-Type", "text/plain", "Origin", same), "p1", http.StatusUnsupportedMediaType},
		{"cookie no type", cookie(sess, "Origin", same), "p2", http.StatusUnsupportedMediaType},
		{"cookie form", cookie(sess, "Content-Type", "application/x-www-form-urlencoded", "Origin", same), "p3", http.StatusUnsupportedMediaType},
		{"cookie multipart", cookie(sess, "Content-Type", "multipart/form-data; boundary=x", "Origin", same), "p4", http.StatusUnsupportedMediaType},
		{"cookie csv, no Origin nor Sec-Fetch-Site", cookie(sess, "Content-Type", "text/csv"), "p7", http.StatusForbidden},
		{"cookie cross-site csv", cookie(sess, "Content-Type", "text/csv", "Sec-Fetch-Site", "cross-site"), "p5", http.StatusForbidden},
		{"cookie same-origin csv", cookie(sess, "Content-Type", "text/csv; charset=utf-8", "Origin", "http://cron.example.com",
			"Sec-Fetch-Site", "same-origin"), "ok1", http.StatusCreated},
		{"token text/plain", merge(bearer(b.tokens[task.RoleAdmin]), map[string]string{"Content-Type": "text/plain"}), "p6",
			http.StatusUnsupportedMediaType},
		{"token csv", merge(bearer(b.tokens[task.RoleAdmin]), map[string]string{"Content-Type": "text/csv"}), "ok2", http.StatusCreated},
	}
	for _, tt := range tests {
		rec := b.send(t, req{method: "POST", path: path, body: csv(tt.id), headers: tt.headers})
		if rec.Code != tt.want {
			t.Errorf("%s: %d, want %d (%s)", tt.name, rec.Code, tt.want, rec.Body)
			continue
		}
		if tt.want == http.StatusUnsupportedMediaType && !strings.Contains(rec.Body.String(), `"field":"Content-Type"`) {
			t.Errorf("%s: body %s does not name Content-Type", tt.name, rec.Body)
		}
	}
	list := b.send(t, req{method: "GET", path: "/api/v1/scenarios/memos/rows", headers: bearer(b.tokens[task.RoleAdmin])})
	for _, id := range []string{"p1", "p2", "p3", "p4", "p5", "p6", "p7"} {
		if strings.Contains(list.Body.String(), `"`+id+`"`) {
			t.Errorf("refused import stored row %s", id)
		}
	}
	if !strings.Contains(list.Body.String(), `"ok1"`) || !strings.Contains(list.Body.String(), `"ok2"`) {
		t.Errorf("accepted imports missing from the rows: %s", list.Body)
	}
}
