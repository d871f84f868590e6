package authapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"cronsheet/store"
	"cronsheet/task"
)

// TestTargetSecretsWriteOnly: a target's secrets (the URL's password, query
// values, credential header values) are never answered, to a viewer or an
// admin, nor kept in or shown from the audit trail; a PUT of a GET answer
// keeps them, a PUT with a new value changes them, and a mask with nothing
// stored behind it is refused naming the field.
func TestTargetSecretsWriteOnly(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, nil)
	admin, viewer := bearer(b.tokens[task.RoleAdmin]), bearer(b.tokens[task.RoleViewer])
	secrets := []string{"hunter2", "k3y-value", "s3cr3t-bearer", "abc-api-key"}
	const target = `{"id":"hook","kind":"http","state":"running","http":{"method":"POST",
		"url":"https://bob:hunter2@hooks.example.com/h/{{task_id}}?key=k3y-value&day={{day}}&flag",
		"headers":{"Authorization":"Bearer s3cr3t-bearer","X-Api-Key":"abc-api-key","Content-Type":"application/json","X-Param":"{{tok}}"}}}`
	noSecret := func(what, body string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(body, s) {
				t.Errorf("%s shows secret %q: %s", what, s, body)
			}
		}
	}
	rec := b.send(t, req{method: "POST", path: "/api/v1/targets", body: target, headers: admin})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	noSecret("POST answer", rec.Body.String())
	for role, h := range map[string]map[string]string{"viewer": viewer, "admin": admin} {
		for _, path := range []string{"/api/v1/targets", "/api/v1/targets/hook", "/api/v1/audit?kind=@target"} {
			rec := b.send(t, req{method: "GET", path: path, headers: h})
			if rec.Code != http.StatusOK {
				t.Fatalf("%s GET %s: %d %s", role, path, rec.Code, rec.Body)
			}
			noSecret(role+" GET "+path, rec.Body.String())
		}
	}
	got := b.send(t, req{method: "GET", path: "/api/v1/targets/hook", headers: viewer})
	var shown task.Target
	if err := json.Unmarshal(got.Body.Bytes(), &shown); err != nil {
		t.Fatal(err)
	}
	if want := "https://bob:***@hooks.example.com/h/{{task_id}}?key=***&day={{day}}&flag"; shown.HTTP.URL != want {
		t.Errorf("shown URL %q, want %q", shown.HTTP.URL, want)
	}
	for k, want := range map[string]string{"Authorization": "***", "X-Api-Key": "***", "Content-Type": "application/json", "X-Param": "{{tok}}"} {
		if shown.HTTP.Headers[k] != want {
			t.Errorf("shown header %s = %q, want %q", k, shown.HTTP.Headers[k], want)
		}
	}
	stored := func() *task.Target {
		t.Helper()
		tg, err := b.store.GetTarget(t.Context(), "hook")
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	// The GET answer sent back (renamed) keeps every secret.
	rec = b.send(t, req{method: "PUT", path: "/api/v1/targets/hook",
		body: strings.Replace(got.Body.String(), `"kind"`, `"name":"renamed","kind"`, 1), headers: admin})
	if rec.Code != http.StatusOK {
		t.Fatalf("PUT the GET answer: %d %s", rec.Code, rec.Body)
	}
	noSecret("PUT answer", rec.Body.String())
	if tg := stored(); tg.Name != "renamed" ||
		tg.HTTP.URL != "https://bob:hunter2@hooks.example.com/h/{{task_id}}?key=k3y-value&day={{day}}&flag" ||
		tg.HTTP.Headers["Authorization"] != "Bearer s3cr3t-bearer" || tg.HTTP.Headers["X-Api-Key"] != "abc-api-key" {
		t.Errorf("after a PUT of the masked answer the store holds %+v", tg.HTTP)
	}
	// A new value replaces the secret.
	rec = b.send(t, req{method: "PUT", path: "/api/v1/targets/hook", headers: admin, body: `{"kind":"http","state":"running",
		"http":{"method":"POST","url":"https://bob:n3w-pass@hooks.example.com/h?key=***","headers":{"Authorization":"***"}}}`})
	if rec.Code != http.StatusOK {
		t.Fatalf("PUT a new password: %d %s", rec.Code, rec.Body)
	}
	if tg := stored(); tg.HTTP.URL != "https://bob:n3w-pass@hooks.example.com/h?key=k3y-value" ||
		tg.HTTP.Headers["Authorization"] != "Bearer s3cr3t-bearer" || len(tg.HTTP.Headers) != 1 {
		t.Errorf("after a PUT of a new password the store holds %+v", tg.HTTP)
	}
	// A mask with no stored value behind it is refused.
	for body, field := range map[string]string{
		`{"kind":"http","state":"running","http":{"method":"POST","url":"https://hooks.example.com/h?other=***"}}`:                  "http.url",
		`{"kind":"http","state":"running","http":{"method":"POST","url":"https://x:***@hooks.example.com/"}}`:                       "http.url",
		`{"kind":"http","state":"running","http":{"method":"POST","url":"https://hooks.example.com/","headers":{"X-Other":"***"}}}`: "http.headers",
	} {
		rec := b.send(t, req{method: "PUT", path: "/api/v1/targets/hook", body: body, headers: admin})
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"field":"`+field+`"`) {
			t.Errorf("PUT %s: %d %s, want 400 naming %s", body, rec.Code, rec.Body, field)
		}
	}
	// Nothing in the stored trail holds a secret, and a record holding one
	// (whatever wrote it) is shown masked.
	recs, err := b.store.QueryAudit(t.Context(), store.AuditQuery{Scenario: store.AuditKindTarget, Limit: 100})
	if err != nil || len(recs) < 3 {
		t.Fatalf("audit records: %d, %v", len(recs), err)
	}
	raw, _ := json.Marshal(recs)
	noSecret("the stored audit trail", strings.ReplaceAll(string(raw), "n3w-pass", ""))
	if strings.Contains(string(raw), "n3w-pass") {
		t.Errorf("the stored audit trail holds the new password: %s", raw)
	}
	if err := b.store.AddAudit(t.Context(), &store.AuditRecord{Scenario: store.AuditKindTarget, RowID: "old", Action: store.AuditCreate,
		Who: "x", At: b.now, New: map[string]any{"url": "https://u:hunter2@h.example.com/?key=k3y-value"}}); err != nil {
		t.Fatal(err)
	}
	noSecret("GET audit of a stored secret", b.send(t, req{method: "GET", path: "/api/v1/audit", headers: viewer}).Body.String())
}
