// Package healthapi serves GET /healthz: whether this node can serve,
// as its health check says.
//
// It imports nothing of cronsheet.
package healthapi

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// healthTimeout bounds one health check.
const healthTimeout = 5 * time.Second

// healthBody is the answer of GET /healthz.
type healthBody struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// API serves /healthz; build it with New and mount it with Register.
type API struct {
	health func(ctx context.Context) error
}

// New returns the health endpoint over check, which reports whether the
// service can serve; nil = always healthy.
func New(check func(ctx context.Context) error) *API {
	if check == nil {
		check = func(context.Context) error { return nil }
	}
	return &API{health: check}
}

// Register mounts GET /healthz on r.
func (a *API) Register(r gin.IRouter) {
	r.GET("/healthz", a.healthz)
}

// healthz handles GET /healthz: 200 {"status":"ok"}, or 503 with the error.
func (a *API) healthz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), healthTimeout)
	defer cancel()
	if err := a.health(ctx); err != nil {
		c.JSON(http.StatusServiceUnavailable, healthBody{Status: "unavailable", Error: err.Error()})
		return
	}
	c.JSON(http.StatusOK, healthBody{Status: "ok"})
}
