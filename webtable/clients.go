package webtable

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// TokenList is the allow and deny list of API clients, by bearer token
// (Authorization: Bearer <token>). A denied token is refused (403) always;
// with an allow list, a request needs an allowed token (401 without one,
// 403 with another). Without an allow list the API is open except for
// denied tokens. A nil *TokenList lets everyone in. Tokens are compared in
// constant time.
type TokenList struct {
	allow, deny [][32]byte
}

// NewTokenList returns the list; empty tokens are ignored.
func NewTokenList(allow, deny []string) *TokenList {
	l := &TokenList{}
	for _, t := range allow {
		if t != "" {
			l.allow = append(l.allow, sha256.Sum256([]byte(t)))
		}
	}
	for _, t := range deny {
		if t != "" {
			l.deny = append(l.deny, sha256.Sum256([]byte(t)))
		}
	}
	return l
}

func contains(list [][32]byte, h [32]byte) bool {
	found := 0
	for _, x := range list {
		found |= subtle.ConstantTimeCompare(x[:], h[:])
	}
	return found == 1
}

// middleware checks the request's token against l.
func (l *TokenList) middleware(a *API) gin.HandlerFunc {
	return func(c *gin.Context) {
		if l == nil {
			return
		}
		token, bearer := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
		h := sha256.Sum256([]byte(token))
		switch {
		case bearer && contains(l.deny, h):
			a.writeError(c, httpErr(http.StatusForbidden, "", "this API client's token is denied"))
		case len(l.allow) == 0:
			return
		case !bearer || token == "":
			c.Header("WWW-Authenticate", `Bearer realm="cronsheet jobs"`)
			a.writeError(c, httpErr(http.StatusUnauthorized, "", "the jobs API needs Authorization: Bearer <token>"))
		case !contains(l.allow, h):
			a.writeError(c, httpErr(http.StatusForbidden, "", "this API client's token is not allowed"))
		default:
			return
		}
		c.Abort()
	}
}
