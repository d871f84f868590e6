package authapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"cronsheet/store"
	"cronsheet/task"
)

// deleteRecord returns the one delete record of kind id, failing t when
// there is none or it holds a new state.
func deleteRecord(t *testing.T, b *guardBundle, kind, id string) *store.AuditRecord {
	t.Helper()
	recs, err := b.store.ListAudit(t.Context(), kind, id, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Action == store.AuditDelete {
			if len(r.New) != 0 {
				t.Errorf("%s %s delete record new = %v, want empty", kind, id, r.New)
			}
			return r
		}
	}
	t.Fatalf("no delete record of %s %s among %d records", kind, id, len(recs))
	return nil
}

// TestUserAndTargetDeleteAuditedAsOld: the audit record of a user's or a
// target's deletion keeps what was deleted as its old state: the user's
// role and flags (never the password or its hash), the target's summary
// and headers with every secret masked.
func TestUserAndTargetDeleteAuditedAsOld(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, nil)
	admin := bearer(b.tokens[task.RoleAdmin])
	const password = "dora's password"
	for _, r := range []req{
		{method: "POST", path: "/api/v1/users", body: `{"name":"dora","role":"editor","password":"` + password + `"}`},
		{method: "POST", path: "/api/v1/targets", body: `{"id":"hook","kind":"http","state":"running","http":{"method":"POST",
			"url":"https://bob:hunter2@hooks.example.com/h?key=k3y-value","headers":{"Authorization":"Bearer s3cr3t-bearer",
			"Content-Type":"application/json"}}}`},
	} {
		r.headers = admin
		if rec := b.send(t, r); rec.Code != http.StatusCreated {
			t.Fatalf("%s %s: %d %s", r.method, r.path, rec.Code, rec.Body)
		}
	}
	hash := ""
	if u, err := b.store.GetUser(t.Context(), "dora"); err == nil {
		hash = u.PasswordHash
	}
	for _, path := range []string{"/api/v1/users/dora", "/api/v1/targets/hook"} {
		if rec := b.send(t, req{method: "DELETE", path: path, headers: admin}); rec.Code != http.StatusNoContent {
			t.Fatalf("DELETE %s: %d %s", path, rec.Code, rec.Body)
		}
	}

	user := deleteRecord(t, b, store.AuditKindUser, "dora")
	if user.Old["role"] != "editor" || user.Old["password_set"] != true || user.Old["disabled"] != false {
		t.Errorf("user delete record old = %v, want the deleted user's role, password_set and disabled", user.Old)
	}
	raw, _ := json.Marshal(user)
	if strings.Contains(string(raw), password) || hash != "" && strings.Contains(string(raw), hash) ||
		strings.Contains(string(raw), "hash") {
		t.Errorf("the user's delete record holds the password or its hash: %s", raw)
	}

	target := deleteRecord(t, b, store.AuditKindTarget, "hook")
	if target.Old["kind"] != "http" || target.Old["url"] != "https://bob:***@hooks.example.com/h?key=***" {
		t.Errorf("target delete record old = %v, want its kind and masked URL", target.Old)
	}
	headers, _ := target.Old["headers"].(map[string]any)
	if headers["Authorization"] != task.SecretMask || headers["Content-Type"] != "application/json" {
		t.Errorf("target delete record headers = %v, want Authorization masked, Content-Type shown", target.Old["headers"])
	}
	raw, _ = json.Marshal(target)
	for _, secret := range []string{"hunter2", "k3y-value", "s3cr3t-bearer"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the target's delete record holds secret %q: %s", secret, raw)
		}
	}
}
