// Package targetsapi serves the targets API: where tasks' fires go
// (GET|POST /api/v1/targets, GET|PUT|DELETE /api/v1/targets/:id), each
// change checked (task.Target.Validate and the configuration's
// CheckTarget) and audited.
//
// Its handlers hold only the small Store interface declared here and a
// few callbacks. It imports task, store (for the parameter types) and
// httpapi, never a store driver, patrol, fire, executors, jobs or server.
package targetsapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/store"
	"cronsheet/task"
)

// Store is the part of storage the targets API calls (store.Targets).
type Store interface {
	CreateTarget(ctx context.Context, t *task.Target) error
	GetTarget(ctx context.Context, id string) (*task.Target, error)
	UpdateTarget(ctx context.Context, t *task.Target, ifVersion int64) (*task.Target, error)
	DeleteTarget(ctx context.Context, id string) error
	ListTargets(ctx context.Context, afterID string, limit int) ([]*task.Target, error)
	// TasksUsingTarget and ListFlows find what names a target, so that a
	// target in use is not deleted (store.TargetUsers, store.Flows).
	TasksUsingTarget(ctx context.Context, id string, limit int) ([]string, int, error)
	ListFlows(ctx context.Context, afterID string, limit int) ([]*task.Flow, error)
	// BeginTargetDelete, TargetHolds and EndTargetDelete make the check
	// and the delete one step against writers naming the target
	// (store.TargetUsers).
	BeginTargetDelete(ctx context.Context, id string, now time.Time) error
	TargetHolds(ctx context.Context, id string, since time.Time) (int, error)
	EndTargetDelete(ctx context.Context, id string) error
	// TargetHealth reads the targets' health for the answers
	// (store.TargetHealthBook).
	TargetHealth(ctx context.Context, ids []string) (map[string]task.TargetHealth, error)
}

// Every store the server accepts satisfies Store.
var _ Store = store.Product(nil)

// Deps are the dependencies of the targets API.
type Deps struct {
	// Logger receives the 500s; nil discards them.
	Logger *slog.Logger
	// Store holds the targets. Required.
	Store Store
	// Audit records every change with who made it; nil records nothing.
	Audit store.AuditLog
	// Now is the clock of the audit records; nil = time.Now.
	Now func() time.Time
	// CheckTarget checks what a target's validity depends on in the
	// configuration (an exec command that config lists, a callback host
	// that is allowed), after task.Target.Validate passed; nil checks
	// nothing. A *task.ValidationError names its field; any other error is
	// answered 400 naming the target's kind.
	CheckTarget func(*task.Target) error
	// PendingRows returns the keys of the rows saved naming target id
	// (among their targets or alert targets) whose tasks are not synced
	// yet, so that a delete is refused for them too; nil counts none.
	PendingRows func(ctx context.Context, id string) ([]string, error)
}

// API is the targets API's handler set; build it with New and mount it
// with Register.
type API struct {
	httpapi.Base
	store       Store
	check       func(*task.Target) error
	pendingRows func(ctx context.Context, id string) ([]string, error)
}

// New returns the targets API over d. It panics when d.Store is nil, a
// wiring bug.
func New(d Deps) *API {
	return &API{
		Base:        httpapi.NewBase("targetsapi", d.Logger, d.Audit, d.Now),
		store:       httpapi.Require("targetsapi", "Deps.Store", d.Store),
		check:       d.CheckTarget,
		pendingRows: d.PendingRows,
	}
}

// Register mounts the routes on r:
//
//	GET|POST /api/v1/targets, GET|PUT|DELETE /api/v1/targets/:id
func (a *API) Register(r gin.IRouter) {
	targets := r.Group("/api/v1/targets")
	targets.GET("", a.listTargets)
	targets.POST("", a.createTarget)
	targets.GET("/:id", a.getTarget)
	targets.PUT("/:id", a.putTarget)
	targets.DELETE("/:id", a.deleteTarget)
}

// targetSummary is what the audit trail keeps of a target: no headers or
// body, and the URL with its secrets masked (task.RedactURL).
func targetSummary(t *task.Target) map[string]any {
	m := map[string]any{"name": t.Name, "kind": string(t.Kind), "state": string(t.State), "version": t.Version}
	switch {
	case t.HTTP != nil:
		m["url"] = task.RedactURL(t.HTTP.URL)
	case t.Exec != nil:
		m["command"] = t.Exec.Command
	case t.Kafka != nil:
		m["topic"] = t.Kafka.Topic
	}
	return m
}

// deletedSummary is what the audit trail keeps of a deleted target: its
// summary and, for an HTTP target, its headers, with every secret masked
// (task.Target.Redacted).
func deletedSummary(t *task.Target) map[string]any {
	r := t.Redacted()
	m := targetSummary(r)
	if r.HTTP != nil && len(r.HTTP.Headers) > 0 {
		h := make(map[string]any, len(r.HTTP.Headers))
		for k, v := range r.HTTP.Headers {
			h[k] = v
		}
		m["headers"] = h
	}
	return m
}
