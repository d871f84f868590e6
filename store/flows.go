package store

import (
	"context"

	"cronsheet/task"
)

// Flows is what task flows need from storage: the flows, their executions
// and the hidden task each step fires through. Drivers implement it beside
// Store; store/storetest.RunFlows is its conformance suite.
type Flows interface {
	// CreateFlow stores a new flow with version 1 and CreatedAt = UpdatedAt
	// = now (set on f). A taken id is task.ErrConflict. The caller
	// validates f.
	CreateFlow(ctx context.Context, f *task.Flow) error
	// GetFlow returns a flow or task.ErrNotFound.
	GetFlow(ctx context.Context, id string) (*task.Flow, error)
	// UpdateFlow replaces a flow's fields (all but ID, Version and
	// CreatedAt) and bumps its version. When ifVersion > 0 and differs from
	// the stored version it is task.ErrConflict; a missing flow is
	// task.ErrNotFound. It returns the flow as stored.
	UpdateFlow(ctx context.Context, f *task.Flow, ifVersion int64) (*task.Flow, error)
	// DeleteFlow removes a flow (its executions stay); a missing one is
	// task.ErrNotFound.
	DeleteFlow(ctx context.Context, id string) error
	// ListFlows pages flows in id order after afterID.
	ListFlows(ctx context.Context, afterID string, limit int) ([]*task.Flow, error)

	// CreateExecution stores a new execution with version 1 (set on e). A
	// taken id is task.ErrConflict.
	CreateExecution(ctx context.Context, e *task.Execution) error
	// GetExecution returns an execution or task.ErrNotFound.
	GetExecution(ctx context.Context, id string) (*task.Execution, error)
	// UpdateExecution replaces an execution only while its stored version
	// is still e.Version (a compare-and-set: several nodes may advance the
	// same execution), then sets e.Version to the new version. A moved
	// version is task.ErrConflict, a missing execution task.ErrNotFound.
	UpdateExecution(ctx context.Context, e *task.Execution) error
	// ListExecutions returns a flow's executions, newest first, at most
	// limit.
	ListExecutions(ctx context.Context, flowID string, limit int) ([]*task.Execution, error)
	// RunningExecutions returns executions in state running, oldest first,
	// at most limit (resumption after a crash).
	RunningExecutions(ctx context.Context, limit int) ([]*task.Execution, error)

	// EnsureTask stores t as a new task without a row (like a job, but
	// t.Job may be nil) unless a task with its id exists, which is left
	// as it is. A flow step fires through such a task.
	EnsureTask(ctx context.Context, t *task.Task) error
	// RetireTasks marks the tasks ids that have no row (a deleted flow's
	// step tasks) deleted and disabled, version+1, as a deleted row's
	// tasks are: the node holding one disarms it, and PurgeDeleted
	// removes it once no node holds it (then EnsureTask may create the id
	// afresh). Missing ids, row tasks and tasks retired already are
	// skipped; it returns how many it marked. At most MaxStatusBatch ids.
	RetireTasks(ctx context.Context, ids []string) (int, error)
}

// FlowDumper moves flows and executions between stores (cronsheet export
// / import), beside Dumper; both drivers implement it.
type FlowDumper interface {
	// DumpFlows calls fn with every flow, in id order, as stored (version
	// and times included).
	DumpFlows(ctx context.Context, fn func(*task.Flow) error) error
	// DumpExecutions calls fn with every execution, in id order, as
	// stored (version included).
	DumpExecutions(ctx context.Context, fn func(*task.Execution) error) error
	// RestoreFlow stores a flow exactly as dumped (version below 1 stored
	// as 1) unless its id is stored; it reports whether it inserted.
	RestoreFlow(ctx context.Context, f *task.Flow) (bool, error)
	// RestoreExecution stores an execution exactly as dumped unless its id
	// is stored; it reports whether it inserted.
	RestoreExecution(ctx context.Context, e *task.Execution) (bool, error)
}

// dumpBatch is how many flows or executions one page of a dump reads.
const dumpBatch = 500

// DumpFlowPages calls fn with every flow of fs, paging ListFlows; both
// drivers' DumpFlows use it.
func DumpFlowPages(ctx context.Context, fs Flows, fn func(*task.Flow) error) error {
	after := ""
	for {
		list, err := fs.ListFlows(ctx, after, dumpBatch)
		if err != nil {
			return err
		}
		for _, f := range list {
			if err := fn(f); err != nil {
				return err
			}
		}
		if len(list) < dumpBatch {
			return nil
		}
		after = list[len(list)-1].ID
	}
}

// DumpExecutionPages calls fn with every execution page gives (the
// executions after an id, in id order, at most limit); both drivers'
// DumpExecutions use it.
func DumpExecutionPages(ctx context.Context, page func(ctx context.Context, afterID string, limit int) ([]*task.Execution, error), fn func(*task.Execution) error) error {
	after := ""
	for {
		list, err := page(ctx, after, dumpBatch)
		if err != nil {
			return err
		}
		for _, x := range list {
			if err := fn(x); err != nil {
				return err
			}
		}
		if len(list) < dumpBatch {
			return nil
		}
		after = list[len(list)-1].ID
	}
}
