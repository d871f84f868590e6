// Package explain answers "why did / didn't / will / won't this task
// fire?" for one task and one slot: it applies, in order, the rules the
// engine applies (the row, the task's state, the window, the schedule,
// each target's state and admission, overlap, misfire, the claim, the
// ledger) and says which one decides, in one sentence (report.Answer).
//
// It reads through the narrow Store interface declared here and decides
// with the engine's own functions (fire.NewSlots, fire.MakePlan,
// fire.OverlapOf, task.Admit, the host guard through Deps.CheckTarget, the
// host limits through Deps.HostLimit), never a copy of their rules. It
// imports task, store (types), mapping, fire, admission and report; never
// the HTTP surface, the server or a store driver.
package explain

import (
	"context"
	"fmt"
	"time"

	"cronsheet/admission"
	"cronsheet/explain/report"
	"cronsheet/store"
	"cronsheet/task"
)

// Store is the part of storage an explanation reads.
type Store interface {
	// GetTask returns a task or task.ErrNotFound.
	GetTask(ctx context.Context, taskID string) (*task.Task, error)
	// GetRow returns a row or task.ErrNotFound.
	GetRow(ctx context.Context, scenario, id string) (*task.Row, error)
	// GetTarget returns a target or task.ErrNotFound.
	GetTarget(ctx context.Context, id string) (*task.Target, error)
	// LastSlotBefore returns the latest schedule or misfire slot of a
	// task strictly before before (zero: any), or zero.
	LastSlotBefore(ctx context.Context, taskID string, before time.Time) (time.Time, error)
	// RunsAtSlot returns a task's runs of one slot.
	RunsAtSlot(ctx context.Context, taskID string, slot time.Time) ([]*task.Run, error)
	// UnfinishedRuns returns a task's runs that are not final.
	UnfinishedRuns(ctx context.Context, taskID string) ([]*task.Run, error)
	// ListNodes returns the node registry.
	ListNodes(ctx context.Context) ([]store.Node, error)
	// TargetHealth returns the health of each of ids that has any
	// outcome recorded.
	TargetHealth(ctx context.Context, ids []string) (map[string]task.TargetHealth, error)
}

// Every store the server accepts satisfies Store.
var _ Store = store.Product(nil)

// Deps are what an Explainer reads and decides with.
type Deps struct {
	// Store holds the tasks, rows, targets, runs and nodes. Required.
	Store Store
	// CheckTarget says whether a target may be delivered under this
	// node's configuration (the host guard's allow and deny lists, the
	// listed exec commands, kafka brokers); nil passes every target.
	CheckTarget func(tg *task.Target) error
	// HostLimit is the rate limit of a callback host; nil: none.
	HostLimit func(host string) admission.HostLimit
	// Lease is how long a node's beat keeps it counted as running
	// (patrol.lease); 0 counts every registered node as running.
	Lease time.Duration
	// Now is the clock; nil = time.Now.
	Now func() time.Time
}

// Explainer explains tasks; build it with New.
type Explainer struct {
	d Deps
}

// New returns an Explainer over d. It panics when d.Store is nil, a
// wiring bug.
func New(d Deps) *Explainer {
	if d.Store == nil {
		panic("explain: Deps.Store is nil")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Explainer{d: d}
}

// Explain explains taskID at the instant at: the slot it names is the
// task's first slot at or after at. A zero at asks about the task's next
// slot when it fires, else about its latest missed slot (or, with none,
// the next it would have). Errors: task.ErrNotFound for an unknown task;
// a job is explained like any task (the API refuses jobs before).
func (e *Explainer) Explain(ctx context.Context, taskID string, at time.Time) (*report.Answer, error) {
	t, err := e.d.Store.GetTask(ctx, taskID)
	if err != nil {
		return nil, fmt.Errorf("read task %s: %w", taskID, err)
	}
	c, err := e.newCase(ctx, t, at)
	if err != nil {
		return nil, err
	}
	for _, step := range []func(context.Context, *kase) error{
		e.checkRow, e.checkState, e.checkWindow, e.checkSchedule, e.checkTargets, e.checkHealth,
		e.checkOverlap, e.checkMisfire, e.checkClaim, e.checkLedger,
	} {
		if err := step(ctx, c); err != nil {
			return nil, fmt.Errorf("explain task %s: %w", taskID, err)
		}
	}
	return c.answer(), nil
}
