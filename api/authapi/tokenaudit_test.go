package authapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// TestTokenDeleteAuditedAsOld: the audit record of a token's deletion
// keeps what was deleted as its old state and nothing as its new one (a
// creation is the other way round), and never the token's secret.
func TestTokenDeleteAuditedAsOld(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, nil)
	admin := bearer(b.tokens[task.RoleAdmin])
	rec := b.send(t, req{method: "POST", path: "/api/v1/tokens", body: `{"user":"editor-user","name":"deploy","role":"editor"}`,
		headers: admin})
	var made struct{ ID, Token string }
	if rec.Code != 201 || json.Unmarshal(rec.Body.Bytes(), &made) != nil {
		t.Fatalf("create token: %d %s", rec.Code, rec.Body)
	}
	if rec := b.send(t, req{method: "DELETE", path: "/api/v1/tokens/" + made.ID, headers: admin}); rec.Code != 204 {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	recs, err := b.store.ListAudit(t.Context(), store.AuditKindToken, made.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var del *store.AuditRecord
	for _, r := range recs {
		if r.Action == store.AuditDelete {
			del = r
		}
	}
	if del == nil {
		t.Fatalf("no delete record among %d records", len(recs))
	}
	if len(del.New) != 0 {
		t.Errorf("delete record new = %v, want empty", del.New)
	}
	if del.Old["name"] != "deploy" || del.Old["user"] != "editor-user" || del.Old["role"] != "editor" {
		t.Errorf("delete record old = %v, want the deleted token's name, user and role", del.Old)
	}
	raw, _ := json.Marshal(del)
	if made.Token != "" && json.Valid(raw) && strings.Contains(string(raw), made.Token) {
		t.Errorf("the audit record holds the token's secret: %s", raw)
	}
}

// TestTokenExpiresInSecondsOrDuration: a token's expires_in is a duration
// ("90m") or a number of seconds, as a number or as text; anything else is
// a 400 naming expires_in, in words.
func TestTokenExpiresInSecondsOrDuration(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, nil)
	admin := bearer(b.tokens[task.RoleAdmin])
	for expires, want := range map[string]time.Duration{`3600`: time.Hour, `"3600"`: time.Hour, `"90m"`: 90 * time.Minute} {
		body := `{"user":"editor-user","name":"t","role":"viewer","expires_in":` + expires + `}`
		rec := b.send(t, req{method: "POST", path: "/api/v1/tokens", body: body, headers: admin})
		var made struct {
			ExpiresAt time.Time `json:"expires_at"`
		}
		if rec.Code != 201 || json.Unmarshal(rec.Body.Bytes(), &made) != nil {
			t.Errorf("expires_in %s: %d %s, want 201", expires, rec.Code, rec.Body)
			continue
		}
		if got := made.ExpiresAt.Sub(b.now); got != want {
			t.Errorf("expires_in %s: expires %s after now, want %s", expires, got, want)
		}
	}
	for _, expires := range []string{`true`, `"soon"`, `-5`, `[1]`} {
		body := `{"user":"editor-user","name":"t","role":"viewer","expires_in":` + expires + `}`
		rec := b.send(t, req{method: "POST", path: "/api/v1/tokens", body: body, headers: admin})
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"field":"expires_in"`) ||
			strings.Contains(rec.Body.String(), "Go ") {
			t.Errorf("expires_in %s: %d %s, want 400 naming expires_in in words", expires, rec.Code, rec.Body)
		}
	}
}
