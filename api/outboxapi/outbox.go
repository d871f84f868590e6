// Package outboxapi serves the outbox: the messages the outbox executor
// kept instead of sending them (GET /api/v1/outbox), newest first.
//
// Its handler holds only the small Store interface declared here. It
// imports task, store (for the check that every store satisfies Store)
// and httpapi, never a store driver, patrol, fire, executors, jobs or
// server.
package outboxapi

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/store"
	"cronsheet/task"
)

// Store is the part of storage the outbox API calls.
type Store interface {
	// ListOutbox returns outbox messages newest first, with ID < beforeID.
	ListOutbox(ctx context.Context, beforeID int64, limit int) ([]*task.OutboxMessage, error)
	// TaskGetter reads the titles of a page of answers.
	httpapi.TaskGetter
}

// Every store the server accepts satisfies Store.
var _ Store = store.Product(nil)

// API serves the outbox; build it with New and mount it with Register.
type API struct {
	httpapi.Base
	store Store
}

// New returns the outbox API over st; logger receives the 500s (nil
// discards them). It panics when st is nil, a wiring bug.
func New(logger *slog.Logger, st Store) *API {
	return &API{Base: httpapi.NewBase("outboxapi", logger, nil, nil), store: httpapi.Require("outboxapi", "Store", st)}
}

// Register mounts GET /api/v1/outbox on r.
func (a *API) Register(r gin.IRouter) {
	r.GET("/api/v1/outbox", a.listOutbox)
}

// outboxPage is the answer of GET /api/v1/outbox.
type outboxPage struct {
	Messages []message `json:"messages"`
}

// message is an outbox message with its task's title, so the page names
// the task rather than shows its id.
type message struct {
	*task.OutboxMessage
	// TaskTitle is the task's title (task.Task.Title); "" when it has
	// none or is gone.
	TaskTitle string `json:"task_title,omitempty"`
}

// withTitles returns msgs with their tasks' titles, read in one batch.
func (a *API) withTitles(ctx context.Context, msgs []*task.OutboxMessage) ([]message, error) {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.TaskID
	}
	titles, err := httpapi.TaskTitles(ctx, a.store, ids)
	if err != nil {
		return nil, err
	}
	out := make([]message, len(msgs))
	for i, m := range msgs {
		out[i] = message{OutboxMessage: m, TaskTitle: titles[m.TaskID]}
	}
	return out, nil
}

// listOutbox handles GET /api/v1/outbox?before=&limit=: messages newest
// first, with ids below `before` when given.
func (a *API) listOutbox(c *gin.Context) {
	var before int64
	if s := c.Query("before"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 1 {
			a.WriteError(c, task.Invalid("before", "must be a message id, a positive integer"))
			return
		}
		before = v
	}
	limit, err := httpapi.IntQuery(c, "limit", httpapi.DefaultLimit, 1, httpapi.MaxLimit)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	msgs, err := a.store.ListOutbox(c.Request.Context(), before, limit)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	views, err := a.withTitles(c.Request.Context(), msgs)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, outboxPage{Messages: views})
}
