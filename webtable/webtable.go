// Package webtable serves cronsheet's JSON REST API with Gin: scenario row
// edits (the table's source of truth), tasks and their states, manual
// triggers, targets, the fire ledger and execution feedback, the outbox,
// the schedule preview and /healthz; the DataTables endpoint of the web
// table; and the embedded web pages.
//
// Handlers hold only the small consumer interfaces Store and
// store.Control, the scenarios and a few callbacks; they pass the
// request's context down, validate every input with bounds, and map errors
// to HTTP statuses in one place (errors.go).
//
// It imports task, mapping and the store package (for the parameter types of
// the Store methods it calls), never a store driver, patrol, executors or
// server.
package webtable

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// Store is the part of storage that the API calls: rows, tasks, runs and
// the outbox, targets and run queries (store.Control), the row audit
// trail (store.AuditLog) and the status aggregates (store.RunStats). Every driver offers all of it (store.Product).
type Store interface {
	store.Control
	store.AuditLog
	store.RunStats

	// InsertRow stores a new row; an existing (scenario, id) is task.ErrConflict.
	InsertRow(ctx context.Context, row *task.Row) error
	// GetRow returns one row or task.ErrNotFound.
	GetRow(ctx context.Context, scenario, id string) (*task.Row, error)
	// UpdateRowFields replaces a row's fields, checking p.IfVersion.
	UpdateRowFields(ctx context.Context, p store.UpdateRowParams) (*task.Row, error)
	// DeleteRow removes a row and disables its task.
	DeleteRow(ctx context.Context, scenario, id string) error
	// ListRows pages a scenario's rows in id order after afterID.
	ListRows(ctx context.Context, scenario, afterID string, limit int) ([]*task.Row, error)
	// GetTask returns a task or task.ErrNotFound.
	GetTask(ctx context.Context, taskID string) (*task.Task, error)
	// GetRun returns the run with triggerID or task.ErrNotFound.
	GetRun(ctx context.Context, triggerID string) (*task.Run, error)
	// ListRuns returns a task's runs, newest slot first, before beforeSlot.
	ListRuns(ctx context.Context, taskID string, beforeSlot time.Time, limit int) ([]*task.Run, error)
	// ListOutbox returns outbox messages newest first, with ID < beforeID.
	ListOutbox(ctx context.Context, beforeID int64, limit int) ([]*task.OutboxMessage, error)
}

// Every store the server accepts satisfies Store.
var _ Store = store.Product(nil)

// Deps are the dependencies of the API.
type Deps struct {
	// Logger receives the 500s; nil discards them.
	Logger *slog.Logger
	// Store holds rows, tasks, runs and the outbox. Required.
	Store Store
	// Scenarios maps a scenario name to its field mapping.
	Scenarios map[string]*mapping.Scenario
	// Wake wakes the patrol loops after an edit; nil = no-op.
	Wake func()
	// Now is the clock; nil = time.Now.
	Now func() time.Time
	// Health reports whether the service can serve; nil = always healthy.
	Health func(ctx context.Context) error
	// CheckTarget checks what a target's validity depends on in the
	// configuration (an exec command that config lists, a callback host
	// that is allowed), after task.Target.Validate passed; nil checks
	// nothing. A *task.ValidationError names its field; any other error is
	// answered 400 naming the target's kind.
	CheckTarget func(*task.Target) error
	// Jobs serves /api/v1/jobs…; nil answers 501.
	Jobs JobsService
	// JobsSocket, when set, serves GET /api/v1/jobs/ws (the WebSocket
	// intake).
	JobsSocket http.Handler
	// Trigger fires a task now, by hand, with one-off params (nil for none)
	// that override the task's for this run, and returns one run per target
	// (a run the task's or target's state refuses is recorded with state
	// task.RunRejected and the reason in Error). Errors: task.ErrNotFound
	// for an unknown task, task.ErrConflict when it was already fired at
	// this instant, task.ErrInvalid for bad params (see
	// POST /api/v1/tasks/:task_id/trigger). nil answers 501.
	Trigger func(ctx context.Context, taskID string, params map[string]string) ([]*task.Run, error)
	// CancelRun ends an unfinished run as cancelled with a reason, taking
	// it from whichever node holds it (POST /api/v1/runs/:trigger_id/cancel).
	// Errors: task.ErrNotFound, task.ErrConflict for a run that finished
	// or waits for feedback. nil answers 501.
	CancelRun func(ctx context.Context, triggerID, why string) (*task.Run, error)
}

// API is the REST API's handler set; build it with New and mount it with
// Register.
type API struct {
	logger    *slog.Logger
	store     Store
	scenarios map[string]*mapping.Scenario
	wake      func()
	now       func() time.Time
	health    func(ctx context.Context) error
	trigger   func(ctx context.Context, taskID string, params map[string]string) ([]*task.Run, error)
	cancelRun func(ctx context.Context, triggerID, why string) (*task.Run, error)
	control   store.Control // Store's targets, task states, run queries
	check     func(*task.Target) error
	jobs      JobsService
	socket    http.Handler
	audit     store.AuditLog // Store's audit trail
}

// New returns an API over d. It panics when d.Store is nil, a wiring bug.
func New(d Deps) *API {
	if d.Store == nil {
		panic("webtable: Deps.Store is nil")
	}
	logger := d.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &API{
		logger:    logger.With("component", "webtable"),
		store:     d.Store,
		scenarios: maps.Clone(d.Scenarios),
		wake:      d.Wake,
		now:       d.Now,
		health:    d.Health,
		trigger:   d.Trigger,
		cancelRun: d.CancelRun,
		control:   d.Store,
		audit:     d.Store,
		check:     d.CheckTarget,
		jobs:      d.Jobs,
		socket:    d.JobsSocket,
	}
	if a.wake == nil {
		a.wake = func() {}
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.health == nil {
		a.health = func(context.Context) error { return nil }
	}
	return a
}

// Register mounts the routes on r: /api/v1/... and /healthz.
//
//	POST   /api/v1/scenarios/:scenario/rows, GET …/rows, GET|PATCH|DELETE …/rows/:id
//	GET    …/rows/:id/audit, POST …/rows/bulk, POST …/rows/batch, POST /api/v1/scenarios/:scenario/import
//	GET    /api/v1/tasks/:task_id, PUT /api/v1/tasks/:task_id/state
//	POST   /api/v1/tasks/:task_id/trigger
//	GET|POST /api/v1/targets, GET|PUT|DELETE /api/v1/targets/:id
//	GET    /api/v1/runs, GET /api/v1/runs/:trigger_id, POST /api/v1/runs/:trigger_id/feedback
//	POST   /api/v1/runs/:trigger_id/cancel
//	GET    /api/v1/outbox, GET /api/v1/schedule/preview, GET /api/v1/audit, GET /healthz
//	GET    /api/v1/stats/fires, GET /api/v1/stats/upcoming
func (a *API) Register(r gin.IRouter) {
	v1 := r.Group("/api/v1")

	rows := v1.Group("/scenarios/:scenario/rows")
	rows.POST("", a.createRow)
	rows.GET("", a.listRows)
	rows.GET("/:id", a.getRow)
	rows.PATCH("/:id", a.patchRow)
	rows.DELETE("/:id", a.deleteRow)
	rows.GET("/:id/audit", a.listAudit)
	rows.POST("/bulk", a.bulk)
	rows.POST("/batch", a.batch)
	v1.POST("/scenarios/:scenario/import", a.importCSV)

	v1.GET("/tasks/:task_id", a.getTask)
	v1.PUT("/tasks/:task_id/state", a.setTaskState)
	v1.POST("/tasks/:task_id/trigger", a.triggerTask)

	targets := v1.Group("/targets")
	targets.GET("", a.listTargets)
	targets.POST("", a.createTarget)
	targets.GET("/:id", a.getTarget)
	targets.PUT("/:id", a.putTarget)
	targets.DELETE("/:id", a.deleteTarget)

	jg := v1.Group("/jobs")
	jg.POST("", a.submitJobs)
	jg.GET("", a.listJobs)
	jg.GET("/dead.jsonl", a.exportDead)
	if a.socket != nil {
		jg.GET("/ws", gin.WrapH(a.socket))
	}
	jg.POST("/backfill", a.backfillJobs)
	jg.PUT("/by-key/:key", a.upsertJob)
	jg.GET("/:id", a.getJob)
	jg.DELETE("/:id", a.cancelJob)
	jg.POST("/:id/block", a.blockJob)
	jg.POST("/:id/unblock", a.unblockJob)
	v1.GET("/runs", a.listRuns)
	v1.GET("/runs/:trigger_id", a.getRun)
	v1.POST("/runs/:trigger_id/feedback", a.addFeedback)
	v1.POST("/runs/:trigger_id/cancel", a.cancelRunHandler)
	v1.GET("/outbox", a.listOutbox)
	v1.GET("/schedule/preview", a.preview)
	v1.GET("/audit", a.queryAudit)
	v1.GET("/stats/fires", a.fireStats)
	v1.GET("/stats/upcoming", a.upcoming)

	r.GET("/healthz", a.healthz)
}

// Bounds on query parameters.
const (
	defaultLimit = 50
	maxLimit     = 500
	maxQueryLen  = 512 // bytes of an id-like query parameter
)

// scenario returns the path's scenario, or an error for writeError.
func (a *API) scenario(name string) (*mapping.Scenario, error) {
	sc, ok := a.scenarios[name]
	if !ok || sc == nil {
		return nil, unknownScenario(name)
	}
	return sc, nil
}

// intQuery reads an optional integer query parameter in [lo, hi].
func intQuery(c *gin.Context, name string, def, lo, hi int) (int, error) {
	s, ok := c.GetQuery(name)
	if !ok || s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, task.Invalid(name, "must be an integer from %d to %d", lo, hi)
	}
	return n, nil
}

// stringQuery reads an optional query parameter of at most maxQueryLen bytes.
func stringQuery(c *gin.Context, name string) (string, error) {
	s := c.Query(name)
	if len(s) > maxQueryLen {
		return "", task.Invalid(name, "longer than %d bytes", maxQueryLen)
	}
	return s, nil
}

// timeQuery reads an optional RFC 3339 query parameter; zero when absent.
func timeQuery(c *gin.Context, name string) (time.Time, error) {
	s := c.Query(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, task.Invalid(name, "must be an RFC 3339 time such as 2026-03-08T01:30:00-05:00")
	}
	if err := task.CheckInstant(name, t); err != nil {
		return time.Time{}, err
	}
	return t, nil
}
