package httpapi

import (
	"github.com/gin-gonic/gin"

	"cronsheet/task"
)

// Principal is who makes a request, as the guard (package authapi) found
// it.
type Principal struct {
	// User is the user's name (authapi.LocalDevUser in local_dev mode).
	User string `json:"user"`
	// Role is what they may do: a token's role capped by its user's.
	Role task.Role `json:"role"`
	// Via is how they signed in: session, token, local_dev or jobs_token.
	Via string `json:"via"`
	// Token is the token's name when Via is token.
	Token string `json:"token,omitempty"`
	// JobsOnly limits a jobs_token principal to /api/v1/jobs….
	JobsOnly bool `json:"-"`
}

// Who names p for the audit trail: the user, and the token's name.
func (p *Principal) Who() string {
	if p.Via == "token" {
		return p.User + " (token " + p.Token + ")"
	}
	return p.User
}

// principalKey is the gin.Context key of the request's *Principal.
const principalKey = "cronsheet.principal"

// SetPrincipal makes p the request's principal.
func SetPrincipal(c *gin.Context, p *Principal) { c.Set(principalKey, p) }

// PrincipalOf returns the request's principal, nil when there is none.
func PrincipalOf(c *gin.Context) *Principal {
	if v, ok := c.Get(principalKey); ok {
		p, _ := v.(*Principal)
		return p
	}
	return nil
}
