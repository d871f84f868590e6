// Package runsapi serves the fire ledger: the runs, newest first and
// filtered (GET /api/v1/runs), one run with its feedback
// (GET /api/v1/runs/:trigger_id), a target's feedback on a run it
// accepted (POST …/feedback) and the user's cancel of an unfinished run
// (POST …/cancel).
//
// Its handlers hold only the small Store and Feedback interfaces declared
// here and the CancelRun callback. It imports task, store (for the parameter types)
// and httpapi, never a store driver, patrol, fire, executors, jobs or
// server.
package runsapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/store"
	"cronsheet/task"
)

// Store is the part of storage the runs API calls.
type Store interface {
	// QueryRuns returns runs matching q, newest first.
	QueryRuns(ctx context.Context, q store.RunQuery) ([]*task.Run, error)
	// ListRuns returns a task's runs, newest slot first, before beforeSlot.
	ListRuns(ctx context.Context, taskID string, beforeSlot time.Time, limit int) ([]*task.Run, error)
	// GetRun returns the run with triggerID or task.ErrNotFound.
	GetRun(ctx context.Context, triggerID string) (*task.Run, error)
	// TaskGetter reads the titles of a page of answers.
	httpapi.TaskGetter
	// TaskIDsByTitle returns the ids of the tasks whose title holds every
	// word: the runs filter by title.
	TaskIDsByTitle(ctx context.Context, words []string, limit int) ([]string, error)
}

// Feedback takes a target's report on a run: the run's owner
// (fire.Firer.Feedback), which stores it and tells the run's observers
// when it ends the run. Errors: task.ErrNotFound, task.ErrConflict for a
// run that is finished or holds task.MaxFeedback reports,
// task.ErrInvalid.
type Feedback interface {
	Feedback(ctx context.Context, p store.FeedbackParams) (*task.Run, error)
}

// Every store the server accepts satisfies Store.
var _ Store = store.Product(nil)

// Deps are the dependencies of the runs API.
type Deps struct {
	// Logger receives the 500s; nil discards them.
	Logger *slog.Logger
	// Store holds the runs. Required.
	Store Store
	// Feedback takes the targets' reports (POST …/feedback); nil answers
	// 501.
	Feedback Feedback
	// Audit records every cancel with who made it; nil records nothing.
	Audit store.AuditLog
	// Now is the clock of feedback reports; nil = time.Now.
	Now func() time.Time
	// CancelRun ends an unfinished run as cancelled with a reason, taking
	// it from whichever node holds it (POST /api/v1/runs/:trigger_id/cancel).
	// Errors: task.ErrNotFound, task.ErrConflict for a run that finished
	// or waits for feedback. nil answers 501.
	CancelRun func(ctx context.Context, triggerID, why string) (*task.Run, error)
}

// API is the runs API's handler set; build it with New and mount it with
// Register.
type API struct {
	httpapi.Base
	store     Store
	feedback  Feedback
	cancelRun func(ctx context.Context, triggerID, why string) (*task.Run, error)
}

// New returns the runs API over d. It panics when d.Store is nil, a
// wiring bug.
func New(d Deps) *API {
	return &API{
		Base:      httpapi.NewBase("runsapi", d.Logger, d.Audit, d.Now),
		store:     httpapi.Require("runsapi", "Deps.Store", d.Store),
		feedback:  d.Feedback,
		cancelRun: d.CancelRun,
	}
}

// Register mounts the routes on r:
//
//	GET  /api/v1/runs, GET /api/v1/runs/:trigger_id,
//	POST /api/v1/runs/:trigger_id/feedback, POST /api/v1/runs/:trigger_id/cancel
func (a *API) Register(r gin.IRouter) {
	v1 := r.Group("/api/v1")
	v1.GET("/runs", a.listRuns)
	v1.GET("/runs/:trigger_id", a.getRun)
	v1.POST("/runs/:trigger_id/feedback", a.addFeedback)
	v1.POST("/runs/:trigger_id/cancel", a.cancelRunHandler)
}
