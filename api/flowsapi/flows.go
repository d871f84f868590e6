// Package flowsapi serves the flows API: task flows and their
// executions (/api/v1/flows…, /api/v1/executions/…), each change audited
// and handed to the flow engine (its schedule task, a start, a stop).
//
// Its handlers hold only the small Store and FlowEngine interfaces
// declared here (flows.Engine implements FlowEngine). It imports task,
// store (for the audit log) and httpapi, never the flows engine, a store
// driver, patrol, fire, executors, jobs or server.
package flowsapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/store"
	"cronsheet/task"
)

// The flows API (task flows of design note 001, docs/SEEDS.md):
//
// A flow read through it carries its state: running while an execution of
// it is unfinished, else idle.
//
//	GET    /api/v1/flows?after=&limit=        → 200 {flows, next_after}
//	POST   /api/v1/flows                      → 201 the flow (400 naming the field; 409 id taken)
//	GET    /api/v1/flows/:id                  → 200 the flow, ETag its version (404)
//	PUT    /api/v1/flows/:id                  → 200 the flow (404; 409 stale If-Match)
//	DELETE /api/v1/flows/:id                  → 204 (404)
//	POST   /api/v1/flows/:id/trigger          → 201 the execution ({"params":{…}} optional; 409 no start step)
//	GET    /api/v1/flows/:id/executions       → 200 {executions} newest first
//	GET    /api/v1/executions/:id             → 200 the execution (404)
//	POST   /api/v1/executions/:id/stop        → 200 the execution, interrupted (409 finished)

// FlowEngine starts and stops flow executions (flows.Engine).
type FlowEngine interface {
	Start(ctx context.Context, flowID string, params map[string]string) (*task.Execution, error)
	Stop(ctx context.Context, id string) (*task.Execution, error)
	// SyncSchedule makes the flow's schedule task follow a save: oldVersion
	// is the version before (0: created), cur the flow after (nil:
	// deleted).
	SyncSchedule(ctx context.Context, flowID string, oldVersion int64, cur *task.Flow) error
	// Retire stops a deleted flow's running executions and closes its
	// step tasks.
	Retire(ctx context.Context, f *task.Flow) error
}

// Store is the part of storage the flows API calls (of store.Flows).
type Store interface {
	CreateFlow(ctx context.Context, f *task.Flow) error
	GetFlow(ctx context.Context, id string) (*task.Flow, error)
	UpdateFlow(ctx context.Context, f *task.Flow, ifVersion int64) (*task.Flow, error)
	DeleteFlow(ctx context.Context, id string) error
	ListFlows(ctx context.Context, afterID string, limit int) ([]*task.Flow, error)
	GetExecution(ctx context.Context, id string) (*task.Execution, error)
	ListExecutions(ctx context.Context, flowID string, limit int) ([]*task.Execution, error)
	RunningExecutions(ctx context.Context, limit int) ([]*task.Execution, error)
	// GetTarget returns a target or task.ErrNotFound: steps name only
	// stored targets.
	GetTarget(ctx context.Context, id string) (*task.Target, error)
	// HoldTargets and ReleaseTargets hold the targets a flow names while
	// it is saved, so that a delete of one is refused meanwhile
	// (store.TargetUsers).
	HoldTargets(ctx context.Context, holder string, ids []string, now time.Time) error
	ReleaseTargets(ctx context.Context, holder string) error
}

// Every store the server accepts satisfies Store.
var _ Store = store.Product(nil)

// API serves the flows API; build it with New and mount it with Register.
type API struct {
	httpapi.Base
	store  Store
	engine FlowEngine
}

// New returns the flows API over st and engine; every change it makes
// is recorded in audit (nil: not recorded) with the principal who made it.
func New(logger *slog.Logger, st Store, engine FlowEngine, audit store.AuditLog) *API {
	return &API{Base: httpapi.NewBase("flowsapi", logger, audit, nil), store: st, engine: engine}
}

// flowSummary is what the audit trail keeps of a flow.
func flowSummary(fl *task.Flow) map[string]any {
	steps := make([]any, len(fl.Steps))
	for i, s := range fl.Steps {
		steps[i] = s.ID
	}
	return map[string]any{"version": fl.Version, "start": fl.Start, "steps": steps}
}

// Register adds the flows routes to r.
func (f *API) Register(r gin.IRouter) {
	v1 := r.Group("/api/v1")
	v1.GET("/flows", f.list)
	v1.POST("/flows", f.create)
	v1.GET("/flows/:id", f.get)
	v1.PUT("/flows/:id", f.put)
	v1.DELETE("/flows/:id", f.delete)
	v1.POST("/flows/:id/trigger", f.trigger)
	v1.GET("/flows/:id/executions", f.executions)
	v1.GET("/executions/:id", f.execution)
	v1.POST("/executions/:id/stop", f.stop)
}

// flowBody is a flow's fields as POST and PUT take them; state, version,
// created_at and updated_at are the server's (version is the If-Match of
// a PUT), so a GET answer can be sent back as it is.
type flowBody struct {
	ID          string            `json:"id"`
	Description string            `json:"description"`
	Start       string            `json:"start"`
	Steps       []*task.Step      `json:"steps"`
	MaxDepth    int               `json:"max_depth"`
	Schedule    string            `json:"schedule"`
	TZ          string            `json:"tz"`
	Labels      map[string]string `json:"labels"`
	State       json.RawMessage   `json:"state"`
	Version     json.RawMessage   `json:"version"`
	CreatedAt   json.RawMessage   `json:"created_at"`
	UpdatedAt   json.RawMessage   `json:"updated_at"`
}

func (b *flowBody) flow() *task.Flow {
	return &task.Flow{ID: b.ID, Description: b.Description, Start: b.Start, Steps: b.Steps, MaxDepth: b.MaxDepth,
		Schedule: b.Schedule, TZ: b.TZ, Labels: b.Labels}
}

type flowsPage struct {
	Flows     []*task.Flow `json:"flows"`
	NextAfter string       `json:"next_after"`
}

func (f *API) list(c *gin.Context) {
	after, err := httpapi.StringQuery(c, "after")
	if err != nil {
		f.WriteError(c, err)
		return
	}
	limit, err := httpapi.IntQuery(c, "limit", httpapi.DefaultLimit, 1, httpapi.MaxLimit)
	if err != nil {
		f.WriteError(c, err)
		return
	}
	list, err := f.store.ListFlows(c.Request.Context(), after, limit+1)
	if err != nil {
		f.WriteError(c, err)
		return
	}
	page := flowsPage{Flows: list}
	if len(list) > limit {
		page.Flows, page.NextAfter = list[:limit], list[limit-1].ID
	}
	if page.Flows == nil {
		page.Flows = []*task.Flow{}
	}
	if err := f.setStates(c.Request.Context(), page.Flows...); err != nil {
		f.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, page)
}

func (f *API) create(c *gin.Context) {
	var body flowBody
	if err := httpapi.ReadJSON(c, &body, false); err != nil {
		f.WriteError(c, err)
		return
	}
	fl := body.flow()
	if err := fl.Validate(); err != nil {
		f.WriteError(c, err)
		return
	}
	release, err := f.checkStepTargets(c.Request.Context(), fl)
	defer release()
	if err != nil {
		f.WriteError(c, err)
		return
	}
	if err := f.store.CreateFlow(c.Request.Context(), fl); err != nil {
		f.WriteError(c, httpapi.DescribeAs(err, task.ErrConflict, task.CodeAlreadyExists, "flow %q already exists", fl.ID))
		return
	}
	f.RecordChange(c, store.AuditKindFlow, fl.ID, store.AuditCreate, flowSummary(fl))
	if err := f.engine.SyncSchedule(c.Request.Context(), fl.ID, 0, fl); err != nil {
		// Saved: the engine's next start (SyncSchedules) retries it.
		f.Logger().ErrorContext(c.Request.Context(), "flow schedule", "flow_id", fl.ID, "error", err)
	}
	fl.State = task.FlowIdle
	c.Header("Location", strings.TrimSuffix(c.Request.URL.Path, "/")+"/"+url.PathEscape(fl.ID))
	writeFlow(c, http.StatusCreated, fl)
}

func (f *API) get(c *gin.Context) {
	id, err := httpapi.PathID(c, "id")
	if err != nil {
		f.WriteError(c, err)
		return
	}
	fl, err := f.store.GetFlow(c.Request.Context(), id)
	if err != nil {
		f.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "flow %q not found", id))
		return
	}
	if err := f.setStates(c.Request.Context(), fl); err != nil {
		f.WriteError(c, err)
		return
	}
	writeFlow(c, http.StatusOK, fl)
}

func (f *API) put(c *gin.Context) {
	id, err := httpapi.PathID(c, "id")
	if err != nil {
		f.WriteError(c, err)
		return
	}
	var body flowBody
	if err := httpapi.ReadJSON(c, &body, false); err != nil {
		f.WriteError(c, err)
		return
	}
	if body.ID != "" && body.ID != id {
		f.WriteError(c, task.Invalid("id", "the id of a flow cannot change (it is %q)", task.Truncate(id, 100)))
		return
	}
	body.ID = id
	want, err := httpapi.BodyIfMatch(c.GetHeader("If-Match"), body.Version)
	if err != nil {
		f.WriteError(c, err)
		return
	}
	fl := body.flow()
	if err := fl.Validate(); err != nil {
		f.WriteError(c, err)
		return
	}
	release, err := f.checkStepTargets(c.Request.Context(), fl)
	defer release()
	if err != nil {
		f.WriteError(c, err)
		return
	}
	saved, err := f.store.UpdateFlow(c.Request.Context(), fl, want)
	if err != nil {
		err = httpapi.Describe(err, task.ErrNotFound, "flow %q not found", id)
		err = httpapi.DescribeAs(err, task.ErrConflict, task.CodeVersionConflict, "flow %q changed since you loaded it "+
			"(you sent version %d); reload and try again", id, want)
		f.WriteError(c, err)
		return
	}
	f.RecordChange(c, store.AuditKindFlow, saved.ID, store.AuditUpdate, flowSummary(saved))
	if err := f.engine.SyncSchedule(c.Request.Context(), saved.ID, saved.Version-1, saved); err != nil {
		f.Logger().ErrorContext(c.Request.Context(), "flow schedule", "flow_id", saved.ID, "error", err)
	}
	if err := f.setStates(c.Request.Context(), saved); err != nil {
		f.WriteError(c, err)
		return
	}
	writeFlow(c, http.StatusOK, saved)
}

func (f *API) delete(c *gin.Context) {
	id, err := httpapi.PathID(c, "id")
	if err != nil {
		f.WriteError(c, err)
		return
	}
	want, err := httpapi.IfMatch(c.GetHeader("If-Match"), nil)
	if err != nil {
		f.WriteError(c, err)
		return
	}
	// With If-Match the flow is deleted only at that version, checked on
	// the flow as read just before the delete.
	old, err := f.store.GetFlow(c.Request.Context(), id)
	if err == nil && want > 0 && old.Version != want {
		err = task.VersionConflict(fmt.Sprintf("flow %q", id), old.Version, want)
	}
	if err == nil {
		err = f.store.DeleteFlow(c.Request.Context(), id)
	}
	if err != nil {
		f.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "flow %q not found", id))
		return
	}
	f.RecordChange(c, store.AuditKindFlow, id, store.AuditDelete, nil)
	if err := f.engine.SyncSchedule(c.Request.Context(), id, old.Version, nil); err != nil {
		// A fire of the schedule task left open is refused and closes it.
		f.Logger().ErrorContext(c.Request.Context(), "flow schedule", "flow_id", id, "error", err)
	}
	if err := f.engine.Retire(c.Request.Context(), old); err != nil {
		// A step task left open is held without a schedule and fires
		// only when an execution triggers it.
		f.Logger().ErrorContext(c.Request.Context(), "retire deleted flow", "flow_id", id, "error", err)
	}
	c.Status(http.StatusNoContent)
}

type triggerFlowBody struct {
	Params map[string]string `json:"params"`
}

func (f *API) trigger(c *gin.Context) {
	id, err := httpapi.PathID(c, "id")
	if err != nil {
		f.WriteError(c, err)
		return
	}
	var body triggerFlowBody
	if err := httpapi.ReadJSON(c, &body, true); err != nil {
		f.WriteError(c, err)
		return
	}
	x, err := f.engine.Start(c.Request.Context(), id, body.Params)
	if err != nil {
		f.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "flow %q not found", id))
		return
	}
	f.RecordChange(c, store.AuditKindFlow, id, store.AuditTrigger, map[string]any{"execution": x.ID, "params": len(body.Params)})
	c.Header("Location", "/api/v1/executions/"+url.PathEscape(x.ID))
	c.JSON(http.StatusCreated, x)
}

type executionsPage struct {
	Executions []*task.Execution `json:"executions"`
}

func (f *API) executions(c *gin.Context) {
	id, err := httpapi.PathID(c, "id")
	if err != nil {
		f.WriteError(c, err)
		return
	}
	limit, err := httpapi.IntQuery(c, "limit", httpapi.DefaultLimit, 1, httpapi.MaxLimit)
	if err != nil {
		f.WriteError(c, err)
		return
	}
	list, err := f.store.ListExecutions(c.Request.Context(), id, limit)
	if err != nil {
		f.WriteError(c, err)
		return
	}
	if list == nil {
		list = []*task.Execution{}
	}
	c.JSON(http.StatusOK, executionsPage{Executions: list})
}

func (f *API) execution(c *gin.Context) {
	id, err := httpapi.PathID(c, "id")
	if err != nil {
		f.WriteError(c, err)
		return
	}
	x, err := f.store.GetExecution(c.Request.Context(), id)
	if err != nil {
		f.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "execution %q not found", id))
		return
	}
	c.JSON(http.StatusOK, x)
}

func (f *API) stop(c *gin.Context) {
	id, err := httpapi.PathID(c, "id")
	if err != nil {
		f.WriteError(c, err)
		return
	}
	x, err := f.engine.Stop(c.Request.Context(), id)
	if err != nil {
		f.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "execution %q not found", id))
		return
	}
	f.RecordChange(c, store.AuditKindFlow, x.FlowID, store.AuditStop, map[string]any{"execution": id, "state": string(x.State)})
	c.JSON(http.StatusOK, x)
}

// maxRunningScan bounds the running executions setStates reads: with
// more running at once (across all flows), a flow whose executions are
// all beyond it shows idle.
const maxRunningScan = 1000

// setStates sets each flow's State: running when one of its executions
// is unfinished.
func (f *API) setStates(ctx context.Context, fls ...*task.Flow) error {
	running, err := f.store.RunningExecutions(ctx, maxRunningScan)
	if err != nil {
		return err
	}
	busy := make(map[string]bool, len(running))
	for _, x := range running {
		busy[x.FlowID] = true
	}
	for _, fl := range fls {
		fl.State = task.FlowIdle
		if busy[fl.ID] {
			fl.State = task.FlowRunning
		}
	}
	return nil
}

// writeFlow answers with fl and its version as ETag, for If-Match.
func writeFlow(c *gin.Context, status int, fl *task.Flow) {
	httpapi.WriteVersioned(c, status, fl.Version, fl)
}
