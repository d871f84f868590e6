package authapi

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/auth"
	"cronsheet/store"
	"cronsheet/task"
)

// SessionCookie names the browser session cookie.
const SessionCookie = "cronsheet_session"

// LocalDevUser names the principal that auth mode local_dev signs in.
const LocalDevUser = "local-admin"

// GuardConfig configures the guard.
type GuardConfig struct {
	// Logger receives store failures; nil discards them.
	Logger *slog.Logger
	// Users holds users, sessions and tokens. Required.
	Users store.Users
	// LocalDev signs every request without credentials in as LocalDevUser
	// with role admin. The server allows it only on a loopback listener;
	// the Host and same-origin checks still apply.
	LocalDev bool
	// PublicHosts are the host names (or IPs) clients may use besides
	// loopback (localhost, 127.0.0.0/8, ::1); any other Host is refused.
	PublicHosts []string
	// SessionIdle ends a session unused this long (default 2h); SessionMax
	// ends any session this long after sign-in (default 24h).
	SessionIdle time.Duration
	SessionMax  time.Duration
	// MetricsPublic opens GET /metrics to anyone (default: viewer).
	MetricsPublic bool
	// JobClients are the bearer tokens of CRONSHEET_JOB_TOKENS (allowed:
	// an editor limited to /api/v1/jobs…) and CRONSHEET_JOB_DENIED_TOKENS
	// (refused everywhere). nil: none.
	JobClients *TokenList
	// Limiter slows password guessing; nil = auth.NewLimiter's defaults
	// on Now.
	Limiter *auth.Limiter
	// Audit, when set, records changes to users and tokens.
	Audit store.AuditLog
	// Now is the clock; nil = time.Now.
	Now func() time.Time
}

// Guard is the one check every route passes: the Host header, the caller
// (session cookie, bearer token or local_dev), the route's access in
// Policy, the same-origin rule for browser requests that change state,
// JSON bodies on the API, and the security headers. Build it with
// NewGuard, install Middleware on the engine before any route and mount
// Register's routes (sign-in, users, tokens).
type Guard struct {
	httpapi.Base
	users   store.Users
	cfg     GuardConfig
	policy  map[string]Access
	hosts   map[string]bool
	limiter *auth.Limiter
	// admins serializes the user changes that could leave no active
	// admin (see keepAnAdmin).
	admins sync.Mutex
}

// NewGuard returns the guard for cfg. It panics when cfg.Users is nil, a
// wiring bug.
func NewGuard(cfg GuardConfig) *Guard {
	g := &Guard{Base: httpapi.NewBase("guard", cfg.Logger, cfg.Audit, cfg.Now),
		users: httpapi.Require("authapi", "GuardConfig.Users", cfg.Users), cfg: cfg, policy: Policy(),
		hosts: map[string]bool{}, limiter: cfg.Limiter}
	if g.limiter == nil {
		g.limiter = auth.NewLimiter(auth.LimiterConfig{Now: g.Now})
	}
	if g.cfg.SessionIdle <= 0 {
		g.cfg.SessionIdle = 2 * time.Hour
	}
	if g.cfg.SessionMax <= 0 {
		g.cfg.SessionMax = 24 * time.Hour
	}
	for _, h := range cfg.PublicHosts {
		g.hosts[strings.ToLower(strings.TrimSuffix(h, "."))] = true
	}
	return g
}

// Principal is who makes a request (httpapi.Principal: the handler
// packages read it for the audit trail).
type Principal = httpapi.Principal

// Middleware returns the guard's gin middleware.
func (g *Guard) Middleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		securityHeaders(c)
		route := c.Request.Method + " " + c.FullPath()
		access, known := g.policy[route]
		switch {
		case c.FullPath() == "":
			access = AccessViewer // unknown paths: 404 only for the signed-in
		case !known:
			g.Logger().ErrorContext(c.Request.Context(), "route without access policy", "route", route)
			c.AbortWithStatusJSON(http.StatusForbidden, httpapi.StatusBody(http.StatusForbidden, "route "+route+" has no access policy"))
			return
		}
		if route != "GET /healthz" {
			if err := g.checkHost(c.Request.Host); err != nil {
				g.WriteError(c, err)
				return
			}
		}
		p, err := g.authenticate(c)
		if err != nil {
			g.refuse(c, err)
			return
		}
		if p != nil {
			httpapi.SetPrincipal(c, p)
		}
		// Who may call comes first, so a caller without credentials is
		// told 401 whatever else is wrong with the request.
		if err := g.authorize(p, access, c.Request.URL.Path); err != nil {
			if status, body := httpapi.Classify(err); status == http.StatusForbidden && wantsHTML(c) {
				forbiddenPage(c, p, access.role(), body.Error)
				return
			}
			g.refuse(c, err)
			return
		}
		if err := g.checkBrowser(c, p, route); err != nil {
			g.WriteError(c, err)
			return
		}
		c.Next()
	}
}

// securityHeaders sets the headers every answer carries: pages load
// scripts only from this origin (no inline script), cannot be framed, and
// types are not sniffed.
func securityHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "+
		"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
}

// checkHost refuses a Host header that is neither loopback nor one of
// PublicHosts (DNS rebinding).
func (g *Guard) checkHost(hostport string) error {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "localhost" || g.hosts[host] {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return httpapi.Err(http.StatusMisdirectedRequest, "Host",
		"host %q is not loopback nor one of this server's public_hosts", httpapi.CutUTF8(host, 100))
}

// errUnauthenticated is a request without a principal on a guarded route.
var errUnauthenticated = httpapi.Err(http.StatusUnauthorized, "", "sign in, or send Authorization: Bearer <token>")

// authenticate finds the request's principal: a bearer token, else the
// session cookie, else local_dev's admin; nil when none applies. A bad
// credential is an error (401, or 403 for a denied jobs token).
func (g *Guard) authenticate(c *gin.Context) (*Principal, error) {
	ctx := c.Request.Context()
	if p, ok := ctx.Value(inProcessKey{}).(*Principal); ok && p != nil {
		return p, nil
	}
	if h := c.GetHeader("Authorization"); h != "" {
		token, ok := strings.CutPrefix(h, "Bearer ")
		if !ok || token == "" {
			return nil, httpapi.Err(http.StatusUnauthorized, "Authorization", "must be Bearer <token>")
		}
		return g.bearer(ctx, token)
	}
	if v, err := c.Cookie(SessionCookie); err == nil && v != "" {
		p, err := g.session(ctx, v)
		if errors.Is(err, auth.ErrBadCredential) {
			clearCookie(c)
			if g.cfg.LocalDev {
				return g.localDev(), nil
			}
			return nil, httpapi.Err(http.StatusUnauthorized, "", "the session ended: sign in again")
		}
		return p, err
	}
	if g.cfg.LocalDev {
		return g.localDev(), nil
	}
	return nil, nil
}

// inProcessKey is the context key of InProcess's principal.
type inProcessKey struct{}

// InProcess returns ctx carrying p as the principal of a request the node
// hands its own handler (the declared file applied at start). Only code
// in the process can set a context value: no request from the network
// carries one.
func InProcess(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, inProcessKey{}, p)
}

func (g *Guard) localDev() *Principal {
	return &Principal{User: LocalDevUser, Role: task.RoleAdmin, Via: "local_dev"}
}

// bearer checks an API token, or one of the jobs API's configured tokens.
func (g *Guard) bearer(ctx context.Context, token string) (*Principal, error) {
	if g.cfg.JobClients.denied(token) {
		return nil, httpapi.Err(http.StatusForbidden, "Authorization", "this token is denied")
	}
	if strings.HasPrefix(token, auth.TokenPrefix) {
		cred, u, err := auth.Verify(ctx, g.users, store.KindToken, token, g.Now())
		if errors.Is(err, auth.ErrBadCredential) {
			return nil, httpapi.Err(http.StatusUnauthorized, "Authorization", "unknown, expired or revoked token")
		}
		if err != nil {
			return nil, err
		}
		return &Principal{User: u.Name, Role: cred.Role.Min(u.Role), Via: "token", Token: cred.Name}, nil
	}
	if g.cfg.JobClients.allowed(token) {
		return &Principal{User: "jobs-client", Role: task.RoleEditor, Via: "jobs_token", JobsOnly: true}, nil
	}
	return nil, httpapi.Err(http.StatusUnauthorized, "Authorization", "unknown, expired or revoked token")
}

// session checks a session cookie and its idle time, and refreshes its
// last use (at most once a minute, to spare the store).
func (g *Guard) session(ctx context.Context, value string) (*Principal, error) {
	now := g.Now()
	cred, u, err := auth.Verify(ctx, g.users, store.KindSession, value, now)
	if err != nil {
		return nil, err
	}
	if now.Sub(cred.LastUsed) >= g.cfg.SessionIdle {
		if err := g.users.DeleteCredential(context.WithoutCancel(ctx), cred.ID); err != nil {
			g.Logger().WarnContext(ctx, "remove idle session", "user", u.Name, "error", err)
		}
		return nil, auth.ErrBadCredential
	}
	if now.Sub(cred.LastUsed) >= time.Minute {
		if err := g.users.TouchCredential(ctx, cred.ID, now); err != nil {
			g.Logger().WarnContext(ctx, "touch session", "user", u.Name, "error", err)
		}
	}
	return &Principal{User: u.Name, Role: u.Role, Via: "session"}, nil
}

// authorize checks p against the route's access.
func (g *Guard) authorize(p *Principal, access Access, path string) error {
	need := access.role()
	if need == "" || (access == AccessMetrics && g.cfg.MetricsPublic) {
		return nil
	}
	if p == nil {
		return errUnauthenticated
	}
	if p.JobsOnly && path != "/api/v1/jobs" && !strings.HasPrefix(path, "/api/v1/jobs/") {
		return httpapi.Err(http.StatusForbidden, "", "this token serves only the jobs API")
	}
	if !p.Role.Allows(need) {
		return httpapi.Err(http.StatusForbidden, "", "%s %q may not do this: it needs role %s", p.Role, p.User, need)
	}
	return nil
}

// refuse answers an authentication or authorization failure: pages
// redirect to the sign-in page, the API answers 401 with
// WWW-Authenticate, or 403.
func (g *Guard) refuse(c *gin.Context, err error) {
	status, _ := httpapi.Classify(err)
	if status == http.StatusUnauthorized && c.Request.Method == http.MethodGet && isPage(c.FullPath()) {
		c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(c.Request.URL.RequestURI()))
		c.Abort()
		return
	}
	if status == http.StatusUnauthorized {
		c.Header("WWW-Authenticate", `Bearer realm="cronsheet"`)
	}
	g.WriteError(c, err)
}

// isPage reports whether route is one of the HTML pages.
func isPage(route string) bool {
	switch route {
	case "/", "/targets", "/flows", "/runs", "/jobs", "/outbox", "/status", "/audit", "/users", "/settings", "/api/docs":
		return true
	}
	return false
}

// checkBrowser applies the rules against cross-site requests. Requests
// that change state (and WebSocket upgrades) without a bearer token, which
// a browser never adds by itself, must come from this origin: a
// Sec-Fetch-Site other than same-origin or an Origin of another host is
// refused. One signed in by the session cookie must also say where it
// comes from (sameOriginProof): browsers send Origin on every write and
// WebSocket handshake, and Sec-Fetch-Site on every fetch, so a cookie
// without either is not this site's page. State-changing /api/v1 requests
// with a body must send JSON (the CSV import text/csv; see
// bodyMediaType), so that a cross-site text/plain or form POST never
// reaches a handler.
func (g *Guard) checkBrowser(c *gin.Context, p *Principal, route string) error {
	r := c.Request
	unsafe := r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions
	upgrade := strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
	if (unsafe || upgrade) && p != nil && p.Via == "session" {
		if err := sameOriginProof(r, upgrade); err != nil {
			return err
		}
	}
	if (unsafe || upgrade) && (p == nil || (p.Via != "token" && p.Via != "jobs_token")) {
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
			return httpapi.Err(http.StatusForbidden, "Origin", "cross-site request refused (Sec-Fetch-Site: %s)", httpapi.CutUTF8(site, 40))
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || !strings.EqualFold(u.Host, r.Host) {
				return httpapi.Err(http.StatusForbidden, "Origin", "cross-origin request refused: origin %q is not %q",
					httpapi.CutUTF8(o, 100), httpapi.CutUTF8(r.Host, 100))
			}
		}
	}
	if want := bodyMediaType(route); unsafe && strings.HasPrefix(r.URL.Path, "/api/v1/") && want != "" && hasBody(r) {
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mt != want {
			return httpapi.Err(http.StatusUnsupportedMediaType, "Content-Type", "must be %s, got %q",
				want, httpapi.CutUTF8(r.Header.Get("Content-Type"), 100))
		}
	}
	return nil
}

// sameOriginProof refuses a cookie-authenticated write without Origin and
// without Sec-Fetch-Site, and a cookie-authenticated WebSocket upgrade
// without Origin (403 naming Origin): checkBrowser then checks the values.
// Without this, a client that sends neither (an old browser, a plug-in, a
// page's request stripped of them) would pass with the cookie alone.
func sameOriginProof(r *http.Request, upgrade bool) error {
	origin, site := r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site")
	switch {
	case upgrade && origin == "":
		return httpapi.Err(http.StatusForbidden, "Origin",
			"a WebSocket handshake signed in by the session cookie must send Origin; programs send Authorization: Bearer <token>")
	case origin == "" && site == "":
		return httpapi.Err(http.StatusForbidden, "Origin",
			"a change signed in by the session cookie must send Origin or Sec-Fetch-Site, as browsers do; "+
				"programs send Authorization: Bearer <token>")
	}
	return nil
}

// hasBody reports whether r carries a body.
func hasBody(r *http.Request) bool {
	return r.ContentLength > 0 || (r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody)
}

// setCookie sets the session cookie: HttpOnly, SameSite=Lax, Secure over
// TLS, for the whole site, living at most maxAge.
func setCookie(c *gin.Context, value string, maxAge time.Duration) {
	http.SetCookie(c.Writer, &http.Cookie{Name: SessionCookie, Value: value, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: c.Request.TLS != nil, MaxAge: int(maxAge / time.Second)})
}

// clearCookie removes the session cookie.
func clearCookie(c *gin.Context) {
	http.SetCookie(c.Writer, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: c.Request.TLS != nil, MaxAge: -1})
}

// retryAfter sets Retry-After to d, rounded up to whole seconds.
func retryAfter(c *gin.Context, d time.Duration) {
	c.Header("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
}
