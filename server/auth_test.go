package server

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"cronsheet/api/authapi"
	"cronsheet/config"
	"cronsheet/store"
	"cronsheet/task"
)

// requireAuth turns setup's local_dev off, with the first admin made from
// CRONSHEET_ADMIN_PASSWORD.
func requireAuth(c *config.Config) {
	c.Auth = config.AuthRequired
	c.AdminPassword = "first admin password"
}

// send makes one request with optional bearer token and JSON body.
func (b *testBundle) send(t *testing.T, method, path, token, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// TestEveryRouteGuarded lists the engine's routes: each has an access in
// authapi.Policy, and each one that is not open refuses a request without
// credentials (401, or a redirect to the sign-in page for pages). A new
// route without a policy entry fails here.
func TestEveryRouteGuarded(t *testing.T) {
	b := setup(t, requireAuth)
	policy := authapi.Policy()
	routes := b.engine.(*gin.Engine).Routes()
	if len(routes) < 40 {
		t.Fatalf("only %d routes: the engine is not the one serving", len(routes))
	}
	for _, r := range routes {
		key := r.Method + " " + r.Path
		access, ok := policy[key]
		if !ok {
			t.Errorf("route %s has no entry in authapi.Policy", key)
			continue
		}
		path := strings.NewReplacer(":scenario", "memos", ":id", "x", ":task_id", "x", ":trigger_id", "x",
			":key", "x", ":name", "x", "*path", "app.css").Replace(r.Path)
		body := ""
		if r.Method != http.MethodGet {
			body = "{}"
		}
		code, raw := b.send(t, r.Method, path, "", body)
		switch {
		case access == authapi.AccessOpen:
			if code == http.StatusUnauthorized || code == http.StatusForbidden {
				t.Errorf("open route %s: %d %s", key, code, raw)
			}
		case code == http.StatusSeeOther && r.Method == http.MethodGet:
		case code != http.StatusUnauthorized:
			t.Errorf("%s without credentials: %d, want 401 (%s)", key, code, raw)
		}
	}
	for key := range policy {
		found := false
		for _, r := range routes {
			found = found || r.Method+" "+r.Path == key
		}
		if !found {
			t.Errorf("authapi.Policy names %s, which no route serves", key)
		}
	}
}

// TestAuthRequiredDoneMeans: with auth required, POST rows gets 401
// without a token, 403 with a viewer's, 201 with an editor's, and the
// audit trail names the token's user.
func TestAuthRequiredDoneMeans(t *testing.T) {
	b := setup(t, requireAuth)
	users := b.srv.store.(store.Users)
	admin := token(t, b, users, "admin", task.RoleAdmin)
	for _, u := range []string{`{"name":"vera","role":"viewer"}`, `{"name":"ed","role":"editor","password":"ed's password"}`} {
		if code, raw := b.send(t, "POST", "/api/v1/users", admin, u); code != http.StatusCreated {
			t.Fatalf("add user %s: %d %s", u, code, raw)
		}
	}
	viewer := token(t, b, users, "vera", task.RoleViewer)
	editor := token(t, b, users, "ed", task.RoleEditor)
	row := `{"memo_id":"m1","content":"water the plants","when":"daily 08:00"}`
	for _, c := range []struct {
		who, token string
		want       int
	}{{"nobody", "", 401}, {"viewer", viewer, 403}, {"editor", editor, 201}} {
		if code, raw := b.send(t, "POST", "/api/v1/scenarios/memos/rows", c.token, row); code != c.want {
			t.Errorf("POST rows as %s: %d, want %d (%s)", c.who, code, c.want, raw)
		}
	}
	code, raw := b.send(t, "GET", "/api/v1/scenarios/memos/rows/m1/audit", viewer, "")
	if code != 200 || !strings.Contains(raw, `"who":"ed (token t-ed)"`) {
		t.Errorf("audit: %d %s, want who ed (token t-ed)", code, raw)
	}
	if code, _ := b.send(t, "GET", "/metrics", "", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d, want 401 (metrics.public is false)", code)
	}
	if code, _ := b.send(t, "GET", "/metrics", viewer, ""); code != http.StatusOK {
		t.Errorf("/metrics with a viewer token: %d", code)
	}
	if code, _ := b.send(t, "GET", "/healthz", "", ""); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}
}

// token makes an API token of role for user through the admin API, or
// directly for the first admin.
func token(t *testing.T, b *testBundle, users store.Users, user string, role task.Role) string {
	t.Helper()
	_, tok, err := authapi.NewToken(t.Context(), users, authapi.TokenParams{User: user, Name: "t-" + user, Role: role})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestFirstAdmin: CRONSHEET_ADMIN_PASSWORD makes "admin" once, and a
// second start with another password changes nothing.
func TestFirstAdmin(t *testing.T) {
	b := setup(t, requireAuth)
	u, err := b.srv.store.(store.Users).GetUser(t.Context(), "admin")
	if err != nil || u.Role != task.RoleAdmin || u.PasswordHash == "" || strings.Contains(u.PasswordHash, "first admin") {
		t.Fatalf("first admin = %+v, %v", u, err)
	}
	code, raw := b.send(t, "POST", "/api/v1/login", "", `{"name":"admin","password":"first admin password"}`)
	if code != http.StatusNoContent {
		t.Errorf("sign in as the first admin: %d %s", code, raw)
	}
}

// TestLocalDevNeedsLoopback: local_dev on a non-loopback address refuses
// to start, in the config check and at the bound listener.
func TestLocalDevNeedsLoopback(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:8080"} {
		cfg := config.Default()
		cfg.Listen, cfg.Auth = listen, config.AuthLocalDev
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "auth: local_dev") {
			t.Errorf("Validate with listen %s and local_dev: %v", listen, err)
		}
	}
	for _, listen := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		cfg := config.Default()
		cfg.Listen, cfg.Auth = listen, config.AuthLocalDev
		if err := cfg.Validate(); err != nil {
			t.Errorf("Validate with listen %s and local_dev: %v", listen, err)
		}
	}
	cfg := config.Default()
	cfg.Listen, cfg.Auth = "0.0.0.0:0", config.AuthLocalDev
	cfg.Store.Path = t.TempDir() + "/db"
	_, err := New(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("New with local_dev on 0.0.0.0: %v, want a refusal", err)
	}
	cfg.Auth = "off"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "auth:") {
		t.Errorf("auth: off: %v, want an error naming auth", err)
	}
}
