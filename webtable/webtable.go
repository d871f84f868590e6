// Package webtable serves the web table: a scenario's rows, the table's
// source of truth (create, read, page, patch, delete, bulk actions, CSV
// import), the DataTables server-side endpoint with its column model and
// CSV export (Table), the schedule preview the table's editor shows while
// a schedule is typed, and the embedded web pages (Pages).
//
// The rest of the REST API lives in the packages under api/ (tasks,
// targets, runs, jobs, flows, the audit trail, stats, the outbox, health,
// and authapi's guard), all sharing httpapi's error bodies, decoding and
// If-Match handling.
//
// Handlers hold only the small consumer interfaces Store and
// store.RowTable, the scenarios and a few callbacks; they pass the
// request's context down, validate every input with bounds, and map errors
// to HTTP statuses in one place (httpapi.WriteError).
//
// It imports task, mapping, the store package (for the parameter types of
// the Store methods it calls) and httpapi, never a store driver, patrol,
// fire, executors, jobs or server.
package webtable

import (
	"context"
	"log/slog"
	"maps"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// Store is the part of storage that the row endpoints call: rows, and the
// audit log their edits are recorded in. Every driver offers all of it
// (store.Product).
type Store interface {
	// AddAudit appends an audit record (store.AuditLog.AddAudit).
	AddAudit(ctx context.Context, rec *store.AuditRecord) error

	// InsertRow stores a new row; an existing (scenario, id) is task.ErrConflict.
	InsertRow(ctx context.Context, row *task.Row) error
	// GetRow returns one row or task.ErrNotFound.
	GetRow(ctx context.Context, scenario, id string) (*task.Row, error)
	// UpdateRowFields replaces a row's fields, checking p.IfVersion.
	UpdateRowFields(ctx context.Context, p store.UpdateRowParams) (*task.Row, error)
	// DeleteRow removes a row and disables its task.
	DeleteRow(ctx context.Context, scenario, id string) error
	// DeleteRowIf is DeleteRow at a version (0: any).
	DeleteRowIf(ctx context.Context, scenario, id string, ifVersion int64) error
	// ListRows pages a scenario's rows in id order after afterID.
	ListRows(ctx context.Context, scenario, afterID string, limit int) ([]*task.Row, error)
	// GetTarget returns a target or task.ErrNotFound: a row may name only
	// stored targets.
	GetTarget(ctx context.Context, id string) (*task.Target, error)
	// GetFlow returns a flow or task.ErrNotFound: a row's "flow:<id>"
	// target may name only a stored flow.
	GetFlow(ctx context.Context, id string) (*task.Flow, error)
	// HoldTargets and ReleaseTargets hold the targets a row names while
	// it is saved, so that a delete of one is refused meanwhile
	// (store.TargetUsers).
	HoldTargets(ctx context.Context, holder string, ids []string, now time.Time) error
	ReleaseTargets(ctx context.Context, holder string) error
}

// Every store the server accepts satisfies Store.
var _ Store = store.Product(nil)

// Deps are the dependencies of the row endpoints.
type Deps struct {
	// Logger receives the 500s; nil discards them.
	Logger *slog.Logger
	// Store holds the rows and their audit trail. Required.
	Store Store
	// Scenarios maps a scenario name to its field mapping.
	Scenarios map[string]*mapping.Scenario
	// Wake wakes the patrol loops after an edit; nil = no-op.
	Wake func()
	// Sync disables a switched-off row's task before the edit is answered;
	// nil leaves it to the sync patrol.
	Sync RowSyncer
	// Now is the clock; nil = time.Now.
	Now func() time.Time
}

// API is the row endpoints' handler set; build it with New and mount it
// with Register.
type API struct {
	httpapi.Base
	store     Store
	scenarios map[string]*mapping.Scenario
	wake      func()
	sync      RowSyncer
	edits     rowLocks // edits of one row made here wait for each other
}

// New returns an API over d. It panics when d.Store is nil, a wiring bug.
func New(d Deps) *API {
	a := &API{
		Base:      httpapi.NewBase("webtable", d.Logger, nil, d.Now),
		store:     httpapi.Require("webtable", "Deps.Store", d.Store),
		scenarios: maps.Clone(d.Scenarios),
		wake:      d.Wake,
		sync:      d.Sync,
	}
	if a.wake == nil {
		a.wake = func() {}
	}
	return a
}

// Register mounts the routes on r:
//
//	POST   /api/v1/scenarios/:scenario/rows, GET …/rows, GET|PATCH|DELETE …/rows/:id
//	POST   …/rows/bulk, POST …/rows/batch, POST /api/v1/scenarios/:scenario/import
//	GET    /api/v1/schedule/preview
//
// (A row's audit trail, GET …/rows/:id/audit, is package auditapi's.)
func (a *API) Register(r gin.IRouter) {
	v1 := r.Group("/api/v1")

	rows := v1.Group("/scenarios/:scenario/rows")
	rows.POST("", a.createRow)
	rows.GET("", a.listRows)
	rows.GET("/:id", a.getRow)
	rows.PATCH("/:id", a.patchRow)
	rows.DELETE("/:id", a.deleteRow)
	rows.POST("/bulk", a.bulk)
	rows.POST("/batch", a.batch)
	v1.POST("/scenarios/:scenario/import", a.importCSV)

	v1.GET("/schedule/preview", a.preview)
}

// scenario returns the path's scenario, or an error for WriteError.
func (a *API) scenario(name string) (*mapping.Scenario, error) {
	sc, ok := a.scenarios[name]
	if !ok || sc == nil {
		return nil, httpapi.UnknownScenario(name)
	}
	return sc, nil
}
