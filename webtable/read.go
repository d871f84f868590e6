package webtable

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/task"
)

// healthTimeout bounds one health check.
const healthTimeout = 5 * time.Second

// outboxPage is the answer of GET /api/v1/outbox.
type outboxPage struct {
	Messages []*task.OutboxMessage `json:"messages"`
}

// healthBody is the answer of GET /healthz.
type healthBody struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// getTask handles GET /api/v1/tasks/:task_id.
func (a *API) getTask(c *gin.Context) {
	id := c.Param("task_id")
	t, err := a.store.GetTask(c.Request.Context(), id)
	if err != nil {
		a.writeError(c, describe(err, task.ErrNotFound, "task %q not found", id))
		return
	}
	c.JSON(http.StatusOK, t)
}

// listOutbox handles GET /api/v1/outbox?before=&limit=: messages newest
// first, with ids below `before` when given.
func (a *API) listOutbox(c *gin.Context) {
	var before int64
	if s := c.Query("before"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 1 {
			a.writeError(c, task.Invalid("before", "must be a message id, a positive integer"))
			return
		}
		before = v
	}
	limit, err := intQuery(c, "limit", defaultLimit, 1, maxLimit)
	if err != nil {
		a.writeError(c, err)
		return
	}
	msgs, err := a.store.ListOutbox(c.Request.Context(), before, limit)
	if err != nil {
		a.writeError(c, err)
		return
	}
	if msgs == nil {
		msgs = []*task.OutboxMessage{}
	}
	c.JSON(http.StatusOK, outboxPage{Messages: msgs})
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
