package authapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/auth"
	"cronsheet/store"
	"cronsheet/task"
)

// Register mounts the guard's own routes on r:
//
//	POST /api/v1/login {name, password}: a session cookie (204)
//	POST /api/v1/logout: ends the session (204)
//	GET  /api/v1/me: the caller and the auth mode
//	GET|POST /api/v1/users, PATCH|DELETE /api/v1/users/:name (admin)
//	GET|POST /api/v1/tokens, DELETE /api/v1/tokens/:id (admin)
func (g *Guard) Register(r gin.IRouter) {
	v1 := r.Group("/api/v1")
	v1.POST("/login", g.login)
	v1.POST("/logout", g.logout)
	v1.GET("/me", g.me)
	v1.GET("/users", g.listUsers)
	v1.POST("/users", g.addUser)
	v1.PATCH("/users/:name", g.patchUser)
	v1.DELETE("/users/:name", g.deleteUser)
	v1.GET("/tokens", g.listTokens)
	v1.POST("/tokens", g.addToken)
	v1.DELETE("/tokens/:id", g.deleteToken)
}

// loginRequest is the body of POST /api/v1/login.
type loginRequest struct {
	Name     string `json:"name"`
	Password string `json:"password"`
}

// login checks a name and password and starts a session. Failures are
// counted per name and per client address; past the limiter's free tries
// every attempt waits (429 with Retry-After), right password or not.
func (g *Guard) login(c *gin.Context) {
	var req loginRequest
	if err := httpapi.ReadJSON(c, &req, false); err != nil {
		g.WriteError(c, err)
		return
	}
	if req.Name == "" {
		g.WriteError(c, task.Invalid("name", "required"))
		return
	}
	keys := []string{"user:" + httpapi.CutUTF8(req.Name, store.MaxUserName), "ip:" + c.ClientIP()}
	if wait := g.limiter.Wait(keys...); wait > 0 {
		retryAfter(c, wait)
		g.WriteError(c, httpapi.Err(http.StatusTooManyRequests, "", "too many failed sign-ins: try again in %s",
			wait.Round(time.Second)))
		return
	}
	ctx := c.Request.Context()
	u, err := g.users.GetUser(ctx, req.Name)
	hash := ""
	if err == nil && !u.Disabled {
		hash = u.PasswordHash
	} else if err != nil && !errors.Is(err, task.ErrNotFound) && !errors.Is(err, task.ErrInvalid) {
		g.WriteError(c, err)
		return
	}
	if !auth.CheckPassword(hash, req.Password) {
		g.limiter.Fail(keys...)
		g.Logger().InfoContext(ctx, "sign-in failed", "user", httpapi.CutUTF8(req.Name, store.MaxUserName), "client_ip", c.ClientIP())
		g.WriteError(c, httpapi.Err(http.StatusUnauthorized, "", "wrong name or password"))
		return
	}
	g.limiter.Succeed(keys...)
	now := g.Now()
	cred, value, err := auth.NewCredential(store.KindSession, u.Name, "", u.Role, now)
	if err != nil {
		g.WriteError(c, err)
		return
	}
	cred.ExpiresAt = now.Add(g.cfg.SessionMax)
	if err := g.users.AddCredential(ctx, cred); err != nil {
		g.WriteError(c, err)
		return
	}
	// Sign-ins are rare: a good time to drop sessions past their end.
	if _, err := g.users.DeleteExpiredCredentials(ctx, now); err != nil {
		g.Logger().WarnContext(ctx, "drop expired sessions", "error", err)
	}
	g.Logger().InfoContext(ctx, "signed in", "user", u.Name, "client_ip", c.ClientIP())
	setCookie(c, value, g.cfg.SessionMax)
	c.Status(http.StatusNoContent)
}

// logout ends the request's session (if any) and clears the cookie.
func (g *Guard) logout(c *gin.Context) {
	if v, err := c.Cookie(SessionCookie); err == nil && v != "" {
		if cred, _, err := auth.Verify(c.Request.Context(), g.users, store.KindSession, v, g.Now()); err == nil {
			if err := g.users.DeleteCredential(c.Request.Context(), cred.ID); err != nil && !errors.Is(err, task.ErrNotFound) {
				g.WriteError(c, err)
				return
			}
		}
	}
	clearCookie(c)
	c.Status(http.StatusNoContent)
}

// meAnswer is the answer of GET /api/v1/me.
type meAnswer struct {
	*Principal
	// LocalDev is set in auth mode local_dev: the pages show a banner.
	LocalDev bool `json:"local_dev"`
}

func (g *Guard) me(c *gin.Context) {
	c.JSON(http.StatusOK, meAnswer{Principal: httpapi.PrincipalOf(c), LocalDev: g.cfg.LocalDev})
}

// userRequest is the body of POST /api/v1/users and PATCH …/:name.
type userRequest struct {
	Name     string     `json:"name"`
	Role     *task.Role `json:"role"`
	Password *string    `json:"password"`
	Disabled *bool      `json:"disabled"`
}

func (g *Guard) listUsers(c *gin.Context) {
	us, err := g.users.ListUsers(c.Request.Context())
	if err != nil {
		g.WriteError(c, err)
		return
	}
	if us == nil {
		us = []*store.User{}
	}
	c.JSON(http.StatusOK, gin.H{"users": us})
}

func (g *Guard) addUser(c *gin.Context) {
	var req userRequest
	if err := httpapi.ReadJSON(c, &req, false); err != nil {
		g.WriteError(c, err)
		return
	}
	if req.Role == nil {
		g.WriteError(c, task.Invalid("role", "required: viewer, editor or admin"))
		return
	}
	u := &store.User{Name: req.Name, Role: *req.Role, Disabled: req.Disabled != nil && *req.Disabled, CreatedAt: g.Now()}
	if err := u.Validate(); err != nil {
		g.WriteError(c, err)
		return
	}
	if req.Password != nil {
		h, err := auth.HashPassword(*req.Password)
		if err != nil {
			g.WriteError(c, err)
			return
		}
		u.PasswordHash = h
	}
	if err := g.users.AddUser(c.Request.Context(), u); err != nil {
		g.WriteError(c, httpapi.DescribeAs(err, task.ErrConflict, task.CodeAlreadyExists, "user %q already exists", u.Name))
		return
	}
	g.record(c, store.AuditKindUser, u.Name, store.AuditCreate, userSummary(u, req.Password != nil))
	c.JSON(http.StatusCreated, u)
}

func (g *Guard) patchUser(c *gin.Context) {
	var req userRequest
	if err := httpapi.ReadJSON(c, &req, false); err != nil {
		g.WriteError(c, err)
		return
	}
	p := store.UpdateUserParams{Name: c.Param("name"), Role: req.Role, Disabled: req.Disabled}
	if req.Password != nil {
		h, err := auth.HashPassword(*req.Password)
		if err != nil {
			g.WriteError(c, err)
			return
		}
		p.PasswordHash = &h
	}
	g.admins.Lock()
	u, err := g.updateKeepingAnAdmin(c.Request.Context(), p)
	g.admins.Unlock()
	if err != nil {
		g.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "no user %q", httpapi.CutUTF8(p.Name, 100)))
		return
	}
	g.record(c, store.AuditKindUser, u.Name, store.AuditUpdate, userSummary(u, req.Password != nil))
	c.JSON(http.StatusOK, u)
}

func (g *Guard) deleteUser(c *gin.Context) {
	name := c.Param("name")
	g.admins.Lock()
	old, err := g.deleteKeepingAnAdmin(c.Request.Context(), name)
	g.admins.Unlock()
	if err != nil {
		g.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "no user %q", httpapi.CutUTF8(name, 100)))
		return
	}
	g.Logger().InfoContext(c.Request.Context(), "auth change", "kind", store.AuditKindUser, "id", name,
		"action", store.AuditDelete, "by", httpapi.Who(c))
	// What was deleted is the old state (never the password hash).
	g.RecordDelete(c, store.AuditKindUser, name, userSummary(old, old.PasswordHash != ""))
	c.Status(http.StatusNoContent)
}

// tokenRequest is the body of POST /api/v1/tokens.
type tokenRequest struct {
	User string    `json:"user"`
	Name string    `json:"name"`
	Role task.Role `json:"role"`
	// ExpiresIn is a duration ("720h") or a number of seconds (3600 or
	// "3600"); none or "" = never.
	ExpiresIn json.RawMessage `json:"expires_in"`
}

// expiresText reads a token request's expires_in: text as it is, a number
// as its digits (seconds), null or none as "".
func expiresText(raw json.RawMessage) (string, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if len(raw) == 0 || dec.Decode(&v) != nil {
		return "", nil
	}
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	}
	return "", task.Invalid("expires_in", "must be a duration such as 720h or 90m, or a number of seconds")
}

// tokenAnswer is a new token: its clear value, shown this once.
type tokenAnswer struct {
	*store.Credential
	Token string `json:"token"`
}

func (g *Guard) listTokens(c *gin.Context) {
	user, err := httpapi.StringQuery(c, "user")
	if err != nil {
		g.WriteError(c, err)
		return
	}
	ts, err := g.users.ListCredentials(c.Request.Context(), store.ListCredentialsParams{User: user, Kind: store.KindToken})
	if err != nil {
		g.WriteError(c, err)
		return
	}
	if ts == nil {
		ts = []*store.Credential{}
	}
	c.JSON(http.StatusOK, gin.H{"tokens": ts})
}

func (g *Guard) addToken(c *gin.Context) {
	var req tokenRequest
	if err := httpapi.ReadJSON(c, &req, false); err != nil {
		g.WriteError(c, err)
		return
	}
	expires, err := expiresText(req.ExpiresIn)
	if err != nil {
		g.WriteError(c, err)
		return
	}
	cred, value, err := NewToken(c.Request.Context(), g.users, TokenParams{User: req.User, Name: req.Name,
		Role: req.Role, ExpiresIn: expires, Now: g.Now()})
	if err != nil {
		g.WriteError(c, err)
		return
	}
	g.record(c, store.AuditKindToken, cred.ID, store.AuditCreate, tokenSummary(cred))
	c.JSON(http.StatusCreated, tokenAnswer{Credential: cred, Token: value})
}

func (g *Guard) deleteToken(c *gin.Context) {
	ctx := c.Request.Context()
	id := c.Param("id")
	cred, err := g.users.GetCredential(ctx, id)
	if err == nil && cred.Kind != store.KindToken {
		err = task.ErrNotFound
	}
	if err == nil {
		err = g.users.DeleteCredential(ctx, id)
	}
	if err != nil {
		g.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "no token %q", httpapi.CutUTF8(id, 100)))
		return
	}
	g.Logger().InfoContext(ctx, "auth change", "kind", store.AuditKindToken, "id", cred.ID,
		"action", store.AuditDelete, "by", httpapi.Who(c))
	g.RecordDelete(c, store.AuditKindToken, cred.ID, tokenSummary(cred)) // what was deleted is the old state
	c.Status(http.StatusNoContent)
}

// TokenParams are the arguments of NewToken.
type TokenParams struct {
	User, Name string
	Role       task.Role
	// ExpiresIn is a duration ("720h") or a number of seconds ("3600");
	// "" = never.
	ExpiresIn string
	Now       time.Time
}

// NewToken makes and stores an API token for an existing user and returns
// it with its clear value (shown once). Its role is at most the user's.
// Errors name the field: user, name,
// role, expires_in.
func NewToken(ctx context.Context, users store.Users, p TokenParams) (*store.Credential, string, error) {
	if p.Name == "" || len(p.Name) > store.MaxUserName {
		return nil, "", task.Invalid("name", "must be 1 to %d characters", store.MaxUserName)
	}
	if !p.Role.Valid() {
		return nil, "", task.Invalid("role", "%q is not one of viewer, editor, admin", p.Role)
	}
	var ttl time.Duration
	if p.ExpiresIn != "" {
		d, err := parseExpiry(p.ExpiresIn)
		if err != nil || d <= 0 {
			return nil, "", task.Invalid("expires_in", "must be a positive duration such as 720h or 90m, or a number of seconds")
		}
		ttl = d
	}
	u, err := users.GetUser(ctx, p.User)
	if err != nil {
		if errors.Is(err, task.ErrNotFound) || errors.Is(err, task.ErrInvalid) {
			return nil, "", task.Invalid("user", "no user %q", httpapi.CutUTF8(p.User, 100))
		}
		return nil, "", err
	}
	// A token never claims more than its user holds. Its use is capped by
	// the user's role at each request too (Guard.bearer), which keeps a
	// token made before its user was demoted within the new role.
	if !u.Role.Allows(p.Role) {
		return nil, "", task.Invalid("role", "%s is above the role of user %q (%s): a token's role is at most its user's",
			p.Role, httpapi.CutUTF8(p.User, 100), u.Role)
	}
	cred, value, err := auth.NewCredential(store.KindToken, p.User, p.Name, p.Role, p.Now)
	if err != nil {
		return nil, "", err
	}
	cred.LastUsed = time.Time{}
	if ttl > 0 {
		cred.ExpiresAt = p.Now.Add(ttl)
	}
	if err := users.AddCredential(ctx, cred); err != nil {
		return nil, "", err
	}
	return cred, value, nil
}

// record logs a change to a user or token and adds it to the audit trail.
func (g *Guard) record(c *gin.Context, kind, id, action string, neu map[string]any) {
	g.Logger().InfoContext(c.Request.Context(), "auth change", "kind", kind, "id", id, "action", action, "by", httpapi.Who(c))
	g.RecordChange(c, kind, id, action, neu)
}

// userSummary is what the audit trail keeps of a user: never the hash.
func userSummary(u *store.User, passwordSet bool) map[string]any {
	return map[string]any{"role": string(u.Role), "disabled": u.Disabled, "password_set": passwordSet}
}

// tokenSummary is what the audit trail keeps of a token: never its hash.
func tokenSummary(c *store.Credential) map[string]any {
	return map[string]any{"user": c.User, "name": c.Name, "role": string(c.Role)}
}

// parseExpiry reads a duration ("720h", "90m") or a number of seconds
// ("3600").
func parseExpiry(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(secs) || secs > float64(math.MaxInt64/int64(time.Second)) {
			return 0, errors.New("out of range")
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	return time.ParseDuration(s)
}
