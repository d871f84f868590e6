// Package tasksapi serves a task's own endpoints: read it
// (GET /api/v1/tasks/:task_id), change its state
// (PUT /api/v1/tasks/:task_id/state) and fire it now by hand
// (POST /api/v1/tasks/:task_id/trigger), and say why it did or did not
// fire (GET /api/v1/tasks/:task_id/explain, computed by the explain
// package behind Deps.Explain).
//
// Its handlers hold only the small Store interface declared here and the
// callbacks of Deps (the firer is a Trigger func, the explainer an
// Explain func). It imports task, mapping, store (for the parameter
// types), explain/report and httpapi, never a store driver, patrol, fire,
// executors, explain, jobs or server.
package tasksapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/explain/report"
	"cronsheet/store"
	"cronsheet/task"
)

// Store is the part of storage the tasks API calls.
type Store interface {
	// GetTask returns a task or task.ErrNotFound.
	GetTask(ctx context.Context, taskID string) (*task.Task, error)
	// SetTaskState sets a task's state (store.Control.SetTaskState).
	SetTaskState(ctx context.Context, p store.TaskStateParams) (*task.Task, error)
}

// Every store the server accepts satisfies Store.
var _ Store = store.Product(nil)

// Deps are the dependencies of the tasks API.
type Deps struct {
	// Logger receives the 500s; nil discards them.
	Logger *slog.Logger
	// Store holds the tasks. Required.
	Store Store
	// Audit records every change with who made it; nil records nothing.
	Audit store.AuditLog
	// Wake wakes the patrol loops after a state change; nil = no-op.
	Wake func()
	// Now is the clock; nil = time.Now.
	Now func() time.Time
	// Trigger fires a task now, by hand, with one-off params (nil for none)
	// that override the task's for this run, and returns one run per target
	// (a run the task's or target's state refuses is recorded with state
	// task.RunRejected and the reason in Error). Errors: task.ErrNotFound
	// for an unknown task, task.ErrConflict when it was already fired at
	// this instant, task.ErrInvalid for bad params (see
	// POST /api/v1/tasks/:task_id/trigger). nil answers 501.
	Trigger func(ctx context.Context, taskID string, params map[string]string) ([]*task.Run, error)
	// Explain says why taskID did, did not, will or will not fire at the
	// slot that at names (zero: the default slot; see
	// GET /api/v1/tasks/:task_id/explain). Errors: task.ErrNotFound for an
	// unknown task. nil answers 501.
	Explain func(ctx context.Context, taskID string, at time.Time) (*report.Answer, error)
}

// API is the tasks API's handler set; build it with New and mount it with
// Register.
type API struct {
	httpapi.Base
	store   Store
	wake    func()
	trigger func(ctx context.Context, taskID string, params map[string]string) ([]*task.Run, error)
	explain func(ctx context.Context, taskID string, at time.Time) (*report.Answer, error)
}

// New returns the tasks API over d. It panics when d.Store is nil, a
// wiring bug.
func New(d Deps) *API {
	a := &API{
		Base:    httpapi.NewBase("tasksapi", d.Logger, d.Audit, d.Now),
		store:   httpapi.Require("tasksapi", "Deps.Store", d.Store),
		wake:    d.Wake,
		trigger: d.Trigger,
		explain: d.Explain,
	}
	if a.wake == nil {
		a.wake = func() {}
	}
	return a
}

// Register mounts the routes on r:
//
//	GET /api/v1/tasks/:task_id, PUT /api/v1/tasks/:task_id/state,
//	POST /api/v1/tasks/:task_id/trigger, GET /api/v1/tasks/:task_id/explain
func (a *API) Register(r gin.IRouter) {
	v1 := r.Group("/api/v1")
	v1.GET("/tasks/:task_id", a.getTask)
	v1.PUT("/tasks/:task_id/state", a.setTaskState)
	v1.POST("/tasks/:task_id/trigger", a.triggerTask)
	v1.GET("/tasks/:task_id/explain", a.explainTask)
}
