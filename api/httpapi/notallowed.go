package httpapi

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"cronsheet/task"
)

// RegisterMethodNotAllowed makes r answer a request whose path is routed
// for other methods only with 405 and an Allow header listing them (gin
// sets it), instead of the 404 of an unknown path. The body is the JSON
// error body of every other answer (code method_not_allowed), for the API,
// /healthz and /metrics alike; only a browser asking for a page (Accept
// names text/html) gets gin's plain text. Paths no method routes stay
// 404s.
func RegisterMethodNotAllowed(r *gin.Engine) {
	r.HandleMethodNotAllowed = true
	r.NoMethod(func(c *gin.Context) {
		if !strings.HasPrefix(c.Request.URL.Path, "/api/") && strings.Contains(c.GetHeader("Accept"), "text/html") {
			c.String(http.StatusMethodNotAllowed, "405 method not allowed")
			return
		}
		MethodNotAllowed(c, c.Writer.Header().Get("Allow"))
	})
}

// MethodNotAllowed answers 405 with Allow set to allow and the JSON error
// body, code method_not_allowed. A handler whose parameter route also
// catches a fixed path beside it (GET /api/v1/jobs/:id catches
// /api/v1/jobs/backfill, which only POST routes) answers with it, as gin
// answers a path no route of the method matches.
func MethodNotAllowed(c *gin.Context, allow string) {
	c.Header("Allow", allow)
	c.AbortWithStatusJSON(http.StatusMethodNotAllowed, StatusBody(http.StatusMethodNotAllowed,
		c.Request.Method+" is not allowed on "+task.Truncate(c.Request.URL.Path, 200)+"; allowed: "+allow))
}
