package store

import (
	"context"

	"cronsheet/task"
)

// Dumper reads everything a store holds and writes it back into another
// one, for moving between drivers (cronsheet export / import). It is
// separate from Store so that Store stays what patrols and the API need;
// both drivers implement it.
//
// Runs go back with Ledger.InsertRun, which already skips what is stored.
// Nodes (heartbeats) are not dumped: they describe running processes, not
// data.
type Dumper interface {
	// DumpTargets calls fn with every target, in id order, exactly as
	// stored (version and times included).
	DumpTargets(ctx context.Context, fn func(*task.Target) error) error
	// DumpRows calls fn with every row, in (scenario, id) order.
	DumpRows(ctx context.Context, fn func(*task.Row) error) error
	// DumpTasks calls fn with every task, oldest first, claims left out
	// (a claim means nothing in another store).
	DumpTasks(ctx context.Context, fn func(TaskDump) error) error
	// DumpRuns calls fn with every run, in (task_id, slot, target) order.
	DumpRuns(ctx context.Context, fn func(*task.Run) error) error
	// DumpOutbox calls fn with every outbox message, oldest id first.
	DumpOutbox(ctx context.Context, fn func(*task.OutboxMessage) error) error
	// RestoreRow stores row exactly as dumped (flags, version, feedback,
	// times) unless its (scenario, id) is stored; it reports whether it
	// inserted.
	RestoreRow(ctx context.Context, row *task.Row) (bool, error)
	// RestoreTask stores a task exactly as dumped, unclaimed, unless its
	// task_id is stored; it reports whether it inserted.
	RestoreTask(ctx context.Context, d TaskDump) (bool, error)
	// RestoreTarget stores a target exactly as dumped (version, created_at,
	// updated_at kept; a version below 1 is stored as 1) unless its id is
	// stored; it reports whether it inserted. Only the id is checked (an
	// empty one is task.ErrInvalid): a dump holds what a store accepted.
	RestoreTarget(ctx context.Context, t *task.Target) (bool, error)
	// RestoreOutbox stores an outbox message as dumped (its ID kept)
	// unless its ID, or its non-empty TriggerID, is stored; it reports
	// whether it inserted.
	RestoreOutbox(ctx context.Context, m *task.OutboxMessage) (bool, error)

	// DumpAudit calls fn with every audit record, in id order.
	DumpAudit(ctx context.Context, fn func(*AuditRecord) error) error
	// RestoreAudit stores an audit record as dumped (its ID kept; an ID
	// below 1 is task.ErrInvalid) unless its ID is stored; it reports
	// whether it inserted.
	RestoreAudit(ctx context.Context, rec *AuditRecord) (bool, error)
	// DumpJobEvents calls fn with every job transition, by job id, each
	// job's oldest first (by At, then in the order they were added).
	DumpJobEvents(ctx context.Context, fn func(JobEvent) error) error
	// RestoreJobEvents stores one job's transitions, in order, unless that
	// job has some already; it reports whether it inserted. Every event
	// must name jobID (else task.ErrInvalid).
	RestoreJobEvents(ctx context.Context, jobID string, evs []JobEvent) (bool, error)
}

// TaskDump is a task as Dumper moves it.
type TaskDump struct {
	Task *task.Task `json:"task"`
	// Deleted marks a task whose row was deleted, awaiting purge.
	Deleted bool `json:"deleted,omitempty"`
}
