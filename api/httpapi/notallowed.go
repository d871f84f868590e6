package httpapi

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"cronsheet/task"
)

// RegisterMethodNotAllowed makes r answer a request whose path is routed
// for other methods only with 405 and an Allow header listing them (gin
// sets it), instead of the 404 of an unknown path. Under /api/ the body is
// the JSON error body of every other answer (code method_not_allowed);
// pages keep gin's plain text. Paths no method routes stay 404s.
func RegisterMethodNotAllowed(r *gin.Engine) {
	r.HandleMethodNotAllowed = true
	r.NoMethod(func(c *gin.Context) {
		if strings.HasPrefix(c.Request.URL.Path, "/api/") {
			c.AbortWithStatusJSON(http.StatusMethodNotAllowed, StatusBody(http.StatusMethodNotAllowed,
				c.Request.Method+" is not allowed on "+task.Truncate(c.Request.URL.Path, 200)+
					"; allowed: "+c.Writer.Header().Get("Allow")))
			return
		}
		c.String(http.StatusMethodNotAllowed, "405 method not allowed")
	})
}
