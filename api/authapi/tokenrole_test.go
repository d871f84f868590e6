package authapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"cronsheet/task"
)

// TestTokenRoleAtMostUsers: a token's role is at most
// its user's: a viewer's admin or editor token and an editor's admin
// token are 400 naming role, and nothing is stored; a role at or below the
// user's is made.
func TestTokenRoleAtMostUsers(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, nil)
	admin := bearer(b.tokens[task.RoleAdmin])
	for _, c := range []struct {
		user, role string
		want       int
	}{
		{"viewer-user", "admin", http.StatusBadRequest},
		{"viewer-user", "editor", http.StatusBadRequest},
		{"editor-user", "admin", http.StatusBadRequest},
		{"viewer-user", "viewer", http.StatusCreated},
		{"editor-user", "viewer", http.StatusCreated},
		{"admin-user", "admin", http.StatusCreated},
	} {
		body := `{"user":"` + c.user + `","name":"up-` + c.role + `","role":"` + c.role + `"}`
		rec := b.send(t, req{method: "POST", path: "/api/v1/tokens", body: body, headers: admin})
		if rec.Code != c.want {
			t.Errorf("%s's %s token: %d %s, want %d", c.user, c.role, rec.Code, rec.Body, c.want)
			continue
		}
		if c.want == http.StatusBadRequest && !strings.Contains(rec.Body.String(), `"field":"role"`) {
			t.Errorf("%s's %s token: %s, want the field role named", c.user, c.role, rec.Body)
		}
	}
	list := b.send(t, req{method: "GET", path: "/api/v1/tokens?user=viewer-user", headers: admin})
	var page struct {
		Tokens []struct{ Name, Role string }
	}
	if err := json.Unmarshal(list.Body.Bytes(), &page); err != nil {
		t.Fatal(err)
	}
	for _, tk := range page.Tokens {
		if tk.Role != string(task.RoleViewer) {
			t.Errorf("viewer-user holds token %s with role %s", tk.Name, tk.Role)
		}
	}
}
