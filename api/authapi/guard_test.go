package authapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/authapi"
	"cronsheet/api/httpapi"
	"cronsheet/auth"
	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/mapping"
	"cronsheet/static"
	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
	"cronsheet/webtable"
)

// guardBundle is the API, the pages and the guard on one engine over a
// fresh SQLite store, with a clock the test moves, and one user (with a
// password and a token) per role.
type guardBundle struct {
	router http.Handler
	store  *sqlite.Store
	mu     sync.Mutex
	now    time.Time
	tokens map[task.Role]string // clear API token of each role's user
}

const testPassword = "correct horse battery"

func (b *guardBundle) clock() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.now
}

func (b *guardBundle) advance(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.now = b.now.Add(d)
}

func setupGuard(t *testing.T, mutate func(*authapi.GuardConfig)) *guardBundle {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cronsheet.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatal(err)
	}
	b := &guardBundle{store: st, now: apitest.FixedNow, tokens: map[task.Role]string{}}
	hash, err := auth.HashPassword(testPassword)
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []task.Role{task.RoleViewer, task.RoleEditor, task.RoleAdmin} {
		name := string(role) + "-user"
		if err := st.AddUser(ctx, &store.User{Name: name, Role: role, PasswordHash: hash}); err != nil {
			t.Fatal(err)
		}
		_, tok, err := authapi.NewToken(ctx, st, authapi.TokenParams{User: name, Name: "ci", Role: role, Now: apitest.FixedNow})
		if err != nil {
			t.Fatal(err)
		}
		b.tokens[role] = tok
	}
	logger := slog.New(slog.DiscardHandler)
	cfg := authapi.GuardConfig{Logger: logger, Users: st, Audit: st, PublicHosts: []string{"cron.example.com"},
		SessionIdle: time.Hour, SessionMax: 8 * time.Hour, Now: b.clock,
		Limiter: auth.NewLimiter(auth.LimiterConfig{Free: 3, Base: time.Second, Now: b.clock})}
	if mutate != nil {
		mutate(&cfg)
	}
	guard := authapi.NewGuard(cfg)
	r := gin.New()
	r.Use(httpapi.Middleware(logger)...)
	r.Use(guard.Middleware())
	guard.Register(r)
	fullapi.Mount(r, fullapi.Deps{Logger: logger, Store: st, Scenarios: map[string]*mapping.Scenario{"memos": memos},
		Now: b.clock})
	webtable.NewPages(static.FS).Register(r)
	b.router = r
	return b
}

// req is one request of a guard test.
type req struct {
	method, path, body string
	headers            map[string]string
}

// send serves r with Host cron.example.com and a JSON content type unless
// headers say otherwise.
func (b *guardBundle) send(t *testing.T, r req) *httptest.ResponseRecorder {
	t.Helper()
	var rd io.Reader
	if r.body != "" {
		rd = strings.NewReader(r.body)
	}
	hr := httptest.NewRequest(r.method, "http://cron.example.com"+r.path, rd)
	if r.body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.headers {
		if k == "Host" {
			hr.Host = v
			continue
		}
		hr.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	b.router.ServeHTTP(rec, hr)
	return rec
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

// login signs name in and returns the session cookie's value.
func (b *guardBundle) login(t *testing.T, name, password string) (*httptest.ResponseRecorder, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"name": name, "password": password})
	rec := b.send(t, req{method: "POST", path: "/api/v1/login", body: string(body),
		headers: map[string]string{"Origin": "http://cron.example.com"}})
	for _, c := range rec.Result().Cookies() {
		if c.Name == authapi.SessionCookie && c.Value != "" {
			return rec, c.Value
		}
	}
	return rec, ""
}

func cookie(v string, more ...string) map[string]string {
	h := map[string]string{"Cookie": authapi.SessionCookie + "=" + v}
	for i := 0; i+1 < len(more); i += 2 {
		h[more[i]] = more[i+1]
	}
	return h
}

// TestGuardRoleMatrix: each role against each kind of endpoint.
func TestGuardRoleMatrix(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, nil)
	row := func(id string) string { return `{"memo_id":"` + id + `","content":"t","when":"daily 08:00"}` }
	target := `{"id":"hook","name":"hook","kind":"http","state":"running","http":{"method":"POST","url":"http://127.0.0.1:9/x"}}`
	const (
		none   = task.Role("")
		viewer = task.RoleViewer
		editor = task.RoleEditor
		admin  = task.RoleAdmin
	)
	tests := []struct {
		name string
		r    func(i int) req
		// least is the weakest role allowed; ok is its status.
		least task.Role
		ok    int
	}{
		{"healthz", func(int) req { return req{method: "GET", path: "/healthz"} }, none, 200},
		{"login page", func(int) req { return req{method: "GET", path: "/login"} }, none, 200},
		{"table page", func(int) req { return req{method: "GET", path: "/"} }, viewer, 200},
		{"list rows", func(int) req { return req{method: "GET", path: "/api/v1/scenarios/memos/rows"} }, viewer, 200},
		{"outbox", func(int) req { return req{method: "GET", path: "/api/v1/outbox"} }, viewer, 200},
		{"list targets", func(int) req { return req{method: "GET", path: "/api/v1/targets"} }, viewer, 200},
		{"me", func(int) req { return req{method: "GET", path: "/api/v1/me"} }, viewer, 200},
		{"create row", func(i int) req {
			return req{method: "POST", path: "/api/v1/scenarios/memos/rows", body: row("r" + string(rune('a'+i)))}
		}, editor, 201},
		{"task state", func(int) req {
			return req{method: "PUT", path: "/api/v1/tasks/nope/state", body: `{"state":"stopped"}`}
		}, editor, 404},
		{"create target", func(int) req { return req{method: "POST", path: "/api/v1/targets", body: target} }, admin, 201},
		{"list users", func(int) req { return req{method: "GET", path: "/api/v1/users"} }, admin, 200},
		{"list tokens", func(int) req { return req{method: "GET", path: "/api/v1/tokens"} }, admin, 200},
		{"import", func(int) req {
			return req{method: "POST", path: "/api/v1/scenarios/memos/import", body: "x",
				headers: map[string]string{"Content-Type": "text/csv"}}
		}, admin, 0},
	}
	rank := map[task.Role]int{none: 0, viewer: 1, editor: 2, admin: 3}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, role := range []task.Role{none, viewer, editor, admin} {
				r := tt.r(i)
				if role != none {
					r.headers = merge(r.headers, bearer(b.tokens[role]))
				}
				rec := b.send(t, r)
				allowed := rank[role] >= rank[tt.least]
				switch {
				case allowed && tt.ok != 0 && rec.Code != tt.ok:
					t.Errorf("%s as %q: %d, want %d (%s)", tt.name, role, rec.Code, tt.ok, rec.Body)
				case allowed && (rec.Code == 401 || rec.Code == 403):
					t.Errorf("%s as %q: %d, want allowed (%s)", tt.name, role, rec.Code, rec.Body)
				case !allowed && role == none && rec.Code != 401 && rec.Code != http.StatusSeeOther:
					t.Errorf("%s without credentials: %d, want 401 or a redirect to sign in", tt.name, rec.Code)
				case !allowed && role != none && rec.Code != 403:
					t.Errorf("%s as %q: %d, want 403 (%s)", tt.name, role, rec.Code, rec.Body)
				}
			}
		})
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// TestGuardPageRedirectsToLogin: a page without a session goes to the
// sign-in page, keeping where it was going.
func TestGuardPageRedirectsToLogin(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, nil)
	for _, page := range []string{"/", "/targets", "/flows", "/runs", "/outbox", "/status", "/audit", "/users"} {
		rec := b.send(t, req{method: "GET", path: page})
		if want := "/login?next=" + url.QueryEscape(page); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != want {
			t.Errorf("GET %s: %d to %q, want 303 to %q", page, rec.Code, rec.Header().Get("Location"), want)
		}
	}
	rec := b.send(t, req{method: "GET", path: "/api/v1/outbox"})
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Header().Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("GET /api/v1/outbox: %d, WWW-Authenticate %q", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
	for _, h := range []string{"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options"} {
		if rec.Header().Get(h) == "" {
			t.Errorf("answer lacks %s", h)
		}
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") ||
		strings.Contains(csp, "unsafe-inline'; img") && strings.Contains(csp, "script-src 'self' 'unsafe-inline'") {
		t.Errorf("CSP %q allows inline script", csp)
	}
}

// TestGuardLoginLogoutExpiry: sign in, use the session, sign out; idle and
// absolute expiry end a session.
func TestGuardLoginLogoutExpiry(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, nil)
	rec, sess := b.login(t, "editor-user", testPassword)
	if rec.Code != http.StatusNoContent || sess == "" {
		t.Fatalf("login: %d %s", rec.Code, rec.Body)
	}
	set := rec.Header().Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Lax", "Path=/"} {
		if !strings.Contains(set, want) {
			t.Errorf("Set-Cookie %q lacks %s", set, want)
		}
	}
	if strings.Contains(set, "Secure") {
		t.Errorf("Set-Cookie %q is Secure over plain HTTP", set)
	}
	me := b.send(t, req{method: "GET", path: "/api/v1/me", headers: cookie(sess)})
	if me.Code != 200 || !strings.Contains(me.Body.String(), `"user":"editor-user"`) ||
		!strings.Contains(me.Body.String(), `"via":"session"`) {
		t.Fatalf("me: %d %s", me.Code, me.Body)
	}
	out := b.send(t, req{method: "POST", path: "/api/v1/logout", headers: cookie(sess, "Origin", "http://cron.example.com")})
	if out.Code != http.StatusNoContent || !strings.Contains(out.Header().Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("logout: %d %q", out.Code, out.Header().Get("Set-Cookie"))
	}
	if rec := b.send(t, req{method: "GET", path: "/api/v1/me", headers: cookie(sess)}); rec.Code != 401 {
		t.Errorf("me after logout: %d, want 401", rec.Code)
	}

	// Idle: one hour without use ends it; use within the hour keeps it.
	_, sess = b.login(t, "editor-user", testPassword)
	for range 3 {
		b.advance(50 * time.Minute)
		if rec := b.send(t, req{method: "GET", path: "/api/v1/me", headers: cookie(sess)}); rec.Code != 200 {
			t.Fatalf("me used every 50 min: %d, want 200", rec.Code)
		}
	}
	b.advance(time.Hour)
	if rec := b.send(t, req{method: "GET", path: "/api/v1/me", headers: cookie(sess)}); rec.Code != 401 {
		t.Errorf("me after an idle hour: %d, want 401", rec.Code)
	}

	// Absolute: eight hours after sign-in, however busy.
	_, sess = b.login(t, "editor-user", testPassword)
	for range 9 {
		b.advance(55 * time.Minute)
		if rec := b.send(t, req{method: "GET", path: "/api/v1/me", headers: cookie(sess)}); rec.Code != 200 {
			break
		}
	}
	if rec := b.send(t, req{method: "GET", path: "/api/v1/me", headers: cookie(sess)}); rec.Code != 401 {
		t.Errorf("me 8h15m after sign-in: %d, want 401", rec.Code)
	}

	// A wrong password, an unknown user and a missing name.
	if rec, s := b.login(t, "editor-user", "wrong password"); rec.Code != 401 || s != "" {
		t.Errorf("wrong password: %d cookie %q", rec.Code, s)
	}
	if rec, _ := b.login(t, "nobody", testPassword); rec.Code != 401 {
		t.Errorf("unknown user: %d", rec.Code)
	}
	rec = b.send(t, req{method: "POST", path: "/api/v1/login", body: `{"password":"x"}`})
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"field":"name"`) {
		t.Errorf("login without name: %d %s", rec.Code, rec.Body)
	}
}

// TestGuardBruteForceSlowed: past the free failures, sign-in waits, even
// with the right password, until the delay has passed.
func TestGuardBruteForceSlowed(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, nil)
	for i := range 3 {
		if rec, _ := b.login(t, "admin-user", "guess "+string(rune('a'+i))+"xxxxxx"); rec.Code != 401 {
			t.Fatalf("guess %d: %d, want 401", i, rec.Code)
		}
	}
	rec, sess := b.login(t, "admin-user", testPassword)
	if rec.Code != http.StatusTooManyRequests || sess != "" || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("right password after 3 failures: %d, Retry-After %q, cookie %q", rec.Code, rec.Header().Get("Retry-After"), sess)
	}
	b.advance(time.Second)
	if rec, _ := b.login(t, "admin-user", "guess again xx"); rec.Code != 401 {
		t.Fatalf("guess after the delay: %d", rec.Code)
	}
	if rec, _ := b.login(t, "admin-user", testPassword); rec.Code != http.StatusTooManyRequests ||
		rec.Header().Get("Retry-After") != "2" {
		t.Errorf("the delay doubles: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	b.advance(2 * time.Second)
	if rec, sess := b.login(t, "admin-user", testPassword); rec.Code != http.StatusNoContent || sess == "" {
		t.Errorf("right password after the delay: %d", rec.Code)
	}
}

// TestGuardCSRF: browser requests that change state must be same-origin
// and API bodies JSON; a bearer token (never sent by a browser on its own)
// is not subject to the origin check.
func TestGuardCSRF(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, nil)
	_, sess := b.login(t, "editor-user", testPassword)
	row := `{"memo_id":"x1","content":"t","when":"daily 08:00"}`
	tests := []struct {
		name    string
		headers map[string]string
		body    string
		want    int
		field   string
	}{
		{"same origin", cookie(sess, "Origin", "http://cron.example.com", "Sec-Fetch-Site", "same-origin"), row, 201, ""},
		{"other origin", cookie(sess, "Origin", "http://evil.example"), row, 403, "Origin"},
		{"null origin", cookie(sess, "Origin", "null"), row, 403, "Origin"},
		{"cross-site fetch", cookie(sess, "Sec-Fetch-Site", "cross-site"), row, 403, "Origin"},
		{"same-site fetch", cookie(sess, "Sec-Fetch-Site", "same-site"), row, 403, "Origin"},
		{"text/plain body", cookie(sess, "Origin", "http://cron.example.com", "Content-Type", "text/plain"), row, 415, "Content-Type"},
		{"form body", cookie(sess, "Content-Type", "application/x-www-form-urlencoded", "Origin", "http://cron.example.com"), "a=b", 415, "Content-Type"},
		{"token from elsewhere", merge(bearer(b.tokens[task.RoleEditor]), map[string]string{"Origin": "http://evil.example"}),
			strings.Replace(row, "x1", "x2", 1), 201, ""},
		{"token with text/plain", merge(bearer(b.tokens[task.RoleEditor]), map[string]string{"Content-Type": "text/plain"}),
			row, 415, "Content-Type"},
	}
	for _, tt := range tests {
		rec := b.send(t, req{method: "POST", path: "/api/v1/scenarios/memos/rows", body: tt.body, headers: tt.headers})
		if rec.Code != tt.want {
			t.Errorf("%s: %d, want %d (%s)", tt.name, rec.Code, tt.want, rec.Body)
			continue
		}
		if tt.field != "" && !strings.Contains(rec.Body.String(), `"field":"`+tt.field+`"`) {
			t.Errorf("%s: body %s does not name %s", tt.name, rec.Body, tt.field)
		}
	}
	// A WebSocket handshake (a GET) from another origin is refused too.
	ws := b.send(t, req{method: "GET", path: "/api/v1/outbox", headers: cookie(sess, "Upgrade", "websocket",
		"Connection", "Upgrade", "Origin", "http://evil.example")})
	if ws.Code != 403 || !strings.Contains(ws.Body.String(), `"field":"Origin"`) {
		t.Errorf("cross-origin WebSocket upgrade: %d %s, want 403 naming Origin", ws.Code, ws.Body)
	}
	// Sign-in itself is same-origin only (no login CSRF).
	rec := b.send(t, req{method: "POST", path: "/api/v1/login", body: `{"name":"editor-user","password":"` + testPassword + `"}`,
		headers: map[string]string{"Origin": "http://evil.example"}})
	if rec.Code != 403 {
		t.Errorf("cross-origin login: %d, want 403", rec.Code)
	}
}

// TestGuardHost: a Host that is neither loopback nor a public name is
// refused (DNS rebinding), before credentials are looked at.
func TestGuardHost(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, func(c *authapi.GuardConfig) { c.LocalDev = true })
	for host, want := range map[string]int{
		"cron.example.com":      200,
		"CRON.example.com.:443": 200,
		"127.0.0.1:8080":        200,
		"localhost:8080":        200,
		"[::1]:8080":            200,
		"rebind.attacker.test":  http.StatusMisdirectedRequest,
		"10.0.0.5:8080":         http.StatusMisdirectedRequest,
	} {
		rec := b.send(t, req{method: "GET", path: "/api/v1/outbox", headers: map[string]string{"Host": host}})
		if rec.Code != want {
			t.Errorf("Host %s: %d, want %d (%s)", host, rec.Code, want, rec.Body)
		}
	}
	rec := b.send(t, req{method: "GET", path: "/healthz", headers: map[string]string{"Host": "10.1.2.3:8080"}})
	if rec.Code != 200 {
		t.Errorf("healthz by pod IP: %d, want 200", rec.Code)
	}
}

// TestGuardTokenRevoke: a revoked token is refused at its next request;
// tokens are shown once and listed without their secret.
func TestGuardTokenRevoke(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, nil)
	admin := bearer(b.tokens[task.RoleAdmin])
	rec := b.send(t, req{method: "POST", path: "/api/v1/tokens", body: `{"user":"editor-user","name":"deploy","role":"editor"}`,
		headers: admin})
	var made struct {
		ID, Token string
	}
	if rec.Code != 201 || json.Unmarshal(rec.Body.Bytes(), &made) != nil || made.Token == "" {
		t.Fatalf("create token: %d %s", rec.Code, rec.Body)
	}
	list := b.send(t, req{method: "GET", path: "/api/v1/tokens", headers: admin})
	if strings.Contains(list.Body.String(), made.Token) || strings.Contains(list.Body.String(), `"hash"`) {
		t.Errorf("token list shows a secret: %s", list.Body)
	}
	if rec := b.send(t, req{method: "GET", path: "/api/v1/outbox", headers: bearer(made.Token)}); rec.Code != 200 {
		t.Fatalf("new token: %d", rec.Code)
	}
	if rec := b.send(t, req{method: "DELETE", path: "/api/v1/tokens/" + made.ID, headers: admin}); rec.Code != 204 {
		t.Fatalf("revoke: %d %s", rec.Code, rec.Body)
	}
	if rec := b.send(t, req{method: "GET", path: "/api/v1/outbox", headers: bearer(made.Token)}); rec.Code != 401 {
		t.Errorf("revoked token: %d, want 401", rec.Code)
	}
	for body, field := range map[string]string{
		`{"user":"nobody","name":"x","role":"viewer"}`:                          "user",
		`{"user":"editor-user","name":"","role":"viewer"}`:                      "name",
		`{"user":"editor-user","name":"x","role":"root"}`:                       "role",
		`{"user":"editor-user","name":"x","role":"viewer","expires_in":"soon"}`: "expires_in",
	} {
		rec := b.send(t, req{method: "POST", path: "/api/v1/tokens", body: body, headers: admin})
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"field":"`+field+`"`) {
			t.Errorf("POST tokens %s: %d %s, want 400 naming %s", body, rec.Code, rec.Body, field)
		}
	}
	// A token's role is capped by its user's: a viewer's admin token reads only.
	if _, err := b.store.UpdateUser(t.Context(), store.UpdateUserParams{Name: "admin-user", Role: ptr(task.RoleViewer)}); err != nil {
		t.Fatal(err)
	}
	if rec := b.send(t, req{method: "GET", path: "/api/v1/users", headers: admin}); rec.Code != 403 {
		t.Errorf("admin token of a user now viewer: %d, want 403", rec.Code)
	}
}

func ptr[T any](v T) *T { return &v }

// TestGuardAuditNamesUser: the audit trail names the signed-in user or
// the token, not a header the client chose.
func TestGuardAuditNamesUser(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, nil)
	h := merge(bearer(b.tokens[task.RoleEditor]), map[string]string{"X-Cronsheet-User": "mallory"})
	if rec := b.send(t, req{method: "POST", path: "/api/v1/scenarios/memos/rows",
		body: `{"memo_id":"a1","content":"t","when":"daily 08:00"}`, headers: h}); rec.Code != 201 {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	_, sess := b.login(t, "editor-user", testPassword)
	if rec := b.send(t, req{method: "PATCH", path: "/api/v1/scenarios/memos/rows/a1", body: `{"content":"u"}`,
		headers: cookie(sess, "Origin", "http://cron.example.com")}); rec.Code != 200 {
		t.Fatalf("patch: %d %s", rec.Code, rec.Body)
	}
	recs, err := b.store.ListAudit(t.Context(), "memos", "a1", 0, 10)
	if err != nil || len(recs) != 2 {
		t.Fatalf("audit: %v, %v", recs, err)
	}
	if recs[0].Who != "editor-user" || recs[1].Who != "editor-user (token ci)" {
		t.Errorf("audit who = %q, %q; want editor-user, editor-user (token ci)", recs[0].Who, recs[1].Who)
	}

	// Changes to targets, task states, users and tokens are recorded too,
	// and GET /api/v1/audit lists them with filters.
	admin := bearer(b.tokens[task.RoleAdmin])
	for _, r := range []req{
		{method: "POST", path: "/api/v1/targets", headers: admin,
			body: `{"id":"hook","kind":"http","http":{"method":"POST","url":"http://127.0.0.1:9/x","headers":{"Authorization":"secret-header"}}}`},
		{method: "DELETE", path: "/api/v1/targets/hook", headers: admin},
		{method: "POST", path: "/api/v1/users", body: `{"name":"dora","role":"viewer","password":"dora's password"}`, headers: admin},
		{method: "POST", path: "/api/v1/tokens", body: `{"user":"dora","name":"cli","role":"viewer"}`, headers: admin},
	} {
		if rec := b.send(t, r); rec.Code >= 300 {
			t.Fatalf("%s %s: %d %s", r.method, r.path, rec.Code, rec.Body)
		}
	}
	for _, c := range []struct{ query, want string }{
		{"", "@token:create @user:create @target:delete @target:create memos:update memos:create"},
		{"?kind=%40target", "@target:delete @target:create"},
		{"?who=admin-user+%28token+ci%29&action=create", "@token:create @user:create @target:create"},
		{"?kind=memos&id=a1&limit=1", "memos:update"},
	} {
		rec := b.send(t, req{method: "GET", path: "/api/v1/audit" + c.query, headers: bearer(b.tokens[task.RoleViewer])})
		var page struct {
			Records []store.AuditRecord `json:"records"`
		}
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &page) != nil {
			t.Fatalf("GET audit%s: %d %s", c.query, rec.Code, rec.Body)
		}
		var got []string
		for _, r := range page.Records {
			got = append(got, r.Scenario+":"+r.Action)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("GET audit%s = %v, want %s", c.query, got, c.want)
		}
		if strings.Contains(rec.Body.String(), "secret-header") || strings.Contains(rec.Body.String(), "$2a$") {
			t.Errorf("the audit trail shows a secret: %s", rec.Body)
		}
	}
}

// TestGuardLocalDev: local_dev signs requests without credentials in as
// the local admin, and still refuses cross-origin changes.
func TestGuardLocalDev(t *testing.T) {
	t.Parallel()
	b := setupGuard(t, func(c *authapi.GuardConfig) { c.LocalDev = true })
	me := b.send(t, req{method: "GET", path: "/api/v1/me"})
	if me.Code != 200 || !strings.Contains(me.Body.String(), `"via":"local_dev"`) ||
		!strings.Contains(me.Body.String(), `"local_dev":true`) {
		t.Errorf("me: %d %s", me.Code, me.Body)
	}
	rec := b.send(t, req{method: "POST", path: "/api/v1/targets", body: `{"id":"t"}`,
		headers: map[string]string{"Origin": "http://127.0.0.1:9999"}})
	if rec.Code != 403 {
		t.Errorf("cross-origin POST in local_dev: %d, want 403", rec.Code)
	}
}
