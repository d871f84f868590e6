package authapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"cronsheet/api/authapi"
	"cronsheet/store"
	"cronsheet/task"
)

// TestGuardLastAdmin: no change through the users API leaves no active
// admin: demoting, disabling or deleting the last one is refused 409; with
// a second admin each goes through, and two admins demoting each other at
// once leave exactly one.
func TestGuardLastAdmin(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, nil)
	admin := bearer(b.tokens[task.RoleAdmin])
	refused := []struct {
		method, body, field string
	}{
		{"PATCH", `{"role":"viewer"}`, "role"},
		{"PATCH", `{"role":"editor","disabled":false}`, "role"},
		{"PATCH", `{"disabled":true}`, "disabled"},
		{"DELETE", "", "name"},
	}
	for _, tt := range refused {
		rec := b.send(t, req{method: tt.method, path: "/api/v1/users/admin-user", body: tt.body, headers: admin})
		if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "the last admin cannot") ||
			!strings.Contains(rec.Body.String(), `"field":"`+tt.field+`"`) {
			t.Errorf("%s %s on the last admin: %d %s, want 409 naming %s", tt.method, tt.body, rec.Code, rec.Body, tt.field)
		}
	}
	// Changes that keep the admin an admin pass.
	if rec := b.send(t, req{method: "PATCH", path: "/api/v1/users/admin-user", body: `{"role":"admin","disabled":false}`,
		headers: admin}); rec.Code != 200 {
		t.Errorf("PATCH keeping the last admin: %d %s", rec.Code, rec.Body)
	}
	// A disabled admin does not count as the other admin.
	for _, body := range []string{`{"name":"second","role":"admin","disabled":true}`, `{"name":"third","role":"admin"}`} {
		if rec := b.send(t, req{method: "POST", path: "/api/v1/users", body: body, headers: admin}); rec.Code != 201 {
			t.Fatalf("POST users %s: %d %s", body, rec.Code, rec.Body)
		}
	}
	rec := b.send(t, req{method: "POST", path: "/api/v1/tokens", body: `{"user":"third","name":"ci","role":"admin"}`, headers: admin})
	var made struct{ Token string }
	if rec.Code != 201 || json.Unmarshal(rec.Body.Bytes(), &made) != nil {
		t.Fatalf("token for third: %d %s", rec.Code, rec.Body)
	}
	// admin-user and third each demote themselves at once: exactly one
	// goes through, the other is the last admin.
	var wg sync.WaitGroup
	names := []string{"admin-user", "third"}
	tokens := []map[string]string{admin, bearer(made.Token)}
	codes := make([]int, 2)
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = b.send(t, req{method: "PATCH", path: "/api/v1/users/" + name, body: `{"role":"viewer"}`, headers: tokens[i]}).Code
		}()
	}
	wg.Wait()
	if !(codes[0] == 200 && codes[1] == 409 || codes[0] == 409 && codes[1] == 200) {
		t.Fatalf("two admins demoting themselves at once: %v, want one 200 and one 409", codes)
	}
	left := 0
	if codes[0] == 200 {
		left = 1
	}
	rec = b.send(t, req{method: "DELETE", path: "/api/v1/users/" + names[left], headers: tokens[left]})
	if rec.Code != http.StatusConflict {
		t.Errorf("DELETE the one admin left (%s): %d %s, want 409", names[left], rec.Code, rec.Body)
	}
}

// racingUsers is a users store on which another node demotes "third" just
// before this node's first demotion of admin-user is written: after this
// node checked that third is an admin.
type racingUsers struct {
	store.Users
	once sync.Once
}

func (r *racingUsers) UpdateUser(ctx context.Context, p store.UpdateUserParams) (*store.User, error) {
	if p.Name == "admin-user" && p.Role != nil && *p.Role != task.RoleAdmin {
		r.once.Do(func() {
			viewer := task.RoleViewer
			if _, err := r.Users.UpdateUser(ctx, store.UpdateUserParams{Name: "third", Role: &viewer}); err != nil {
				panic(err)
			}
		})
	}
	return r.Users.UpdateUser(ctx, p)
}

// TestGuardLastAdminAcrossNodes: when another node demotes the other admin
// between this node's check and its write, the change is undone and
// refused 409, for a demotion and a delete alike: an active admin remains.
func TestGuardLastAdminAcrossNodes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ method, body, field string }{
		{"PATCH", `{"role":"viewer"}`, "role"},
		{"DELETE", "", "name"},
	} {
		t.Run(tt.method, func(t *testing.T) {
			t.Parallel()
			b := setupGuard(t, func(c *authapi.GuardConfig) {
				if err := c.Users.AddUser(context.Background(), &store.User{Name: "third", Role: task.RoleAdmin}); err != nil {
					t.Fatal(err)
				}
				c.Users = &racingUsers{Users: c.Users}
			})
			rec := b.send(t, req{method: tt.method, path: "/api/v1/users/admin-user", body: tt.body, headers: bearer(b.tokens[task.RoleAdmin])})
			if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), `"field":"`+tt.field+`"`) {
				t.Errorf("%s admin-user while another node demotes third: %d %s, want 409 naming %s", tt.method, rec.Code, rec.Body, tt.field)
			}
			u, err := b.store.GetUser(t.Context(), "admin-user")
			if err != nil || u.Role != task.RoleAdmin || u.Disabled {
				t.Errorf("admin-user after the refusal: %+v, %v; want an active admin", u, err)
			}
		})
	}
}
