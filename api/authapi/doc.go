// Package authapi decides who may do what on every route: the Guard that
// each request passes (Host check, sign-in by session cookie, API token,
// the jobs API's configured tokens or local_dev, the route's access in
// Policy, the same-origin rule, JSON bodies, security headers), and the
// guard's own routes: sign-in and sign-out, /api/v1/me, users and tokens.
//
// It puts the request's principal where httpapi.PrincipalOf finds it, so
// the handler packages name the author in the audit trail without
// importing this package. It imports auth, store (users, sessions,
// tokens, the audit log), task and httpapi, never a handler package, a
// store driver, patrol, fire, executors, jobs or server.
package authapi
