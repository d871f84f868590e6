package store

import (
	"context"
	"fmt"
	"time"

	"cronsheet/task"
)

// RetentionKind names what the retention patrol prunes.
type RetentionKind string

// Retention kinds. Each has an age, the order items are pruned in:
//   - RetainRuns: finished runs (task.RunState.Final), by finished_at;
//   - RetainJobs: jobs (tasks of task.JobScenario), by created_at; a job
//     goes with its runs, its events and the key it holds;
//   - RetainOutbox: outbox messages, by created_at;
//   - RetainAudit: audit records, by at;
//   - RetainFlowExecutions: flow executions, by started_at.
const (
	RetainRuns           RetentionKind = "runs"
	RetainJobs           RetentionKind = "jobs"
	RetainOutbox         RetentionKind = "outbox"
	RetainAudit          RetentionKind = "audit"
	RetainFlowExecutions RetentionKind = "flow_executions"
)

// RetentionKinds lists every kind, in the order a pass prunes them (jobs
// before runs: a job's runs go with it).
var RetentionKinds = []RetentionKind{RetainJobs, RetainRuns, RetainOutbox, RetainAudit, RetainFlowExecutions}

// MaxPruneBatch bounds PruneParams.Limit.
const MaxPruneBatch = 10_000

// Retention prunes what the store keeps of each kind (the retention
// patrol's needs). Every delete is idempotent: two nodes pruning the same
// items at once each count only what their own delete removed.
// store/storetest.RunRetention is its conformance suite.
type Retention interface {
	// RetentionCutoff returns the position of the keep-th newest item of
	// kind (for runs: of the finished ones), in the kind's age order; the
	// zero Cursor when there are no more than keep (keep >= 1).
	RetentionCutoff(ctx context.Context, kind RetentionKind, keep int) (Cursor, error)
	// Prune examines, in age order, up to p.Limit items of p.Kind placed
	// after p.After and before p.Before (both strictly), and deletes those
	// no longer live, in one short write:
	//   - a run only when final and not the floor of its task: its newest
	//     run (by slot), and its newest schedule or misfire run (what
	//     LastSlot, and so the fire and arming, read) stay;
	//   - a job only when closed or done (is_done), unclaimed, without a
	//     run that is not final, and last updated before p.Before (to the
	//     millisecond: PruneParams.UpdatedBelow);
	//   - a flow execution only when no longer running;
	//   - outbox messages and audit records always.
	// It returns how many it deleted and where the next call resumes.
	Prune(ctx context.Context, p PruneParams) (PruneResult, error)
}

// Cursor is a position in a kind's age order: the age, then the item's
// key (for integer ids, the id as Key formats it), ascending.
type Cursor struct {
	At time.Time
	ID string
}

// IsZero reports whether c is the zero Cursor (the start of the order).
func (c Cursor) IsZero() bool { return c.At.IsZero() && c.ID == "" }

// Before reports whether c comes before d in the age order.
func (c Cursor) Before(d Cursor) bool {
	if !c.At.Equal(d.At) {
		return c.At.Before(d.At)
	}
	return c.ID < d.ID
}

// IntKey formats an integer id as a Cursor.ID: zero-padded, so the order
// of the texts is the order of the numbers.
func IntKey(id int64) string { return fmt.Sprintf("%020d", id) }

// PruneParams are the arguments of Retention.Prune.
type PruneParams struct {
	Kind RetentionKind
	// After resumes a pass (the zero Cursor: from the oldest).
	After Cursor
	// Before bounds what may go: items strictly before it in the age
	// order. A zero Before prunes nothing.
	Before Cursor
	// Limit bounds how many items one call examines (1..MaxPruneBatch).
	Limit int
}

// Check validates p.
func (p PruneParams) Check() error {
	switch p.Kind {
	case RetainRuns, RetainJobs, RetainOutbox, RetainAudit, RetainFlowExecutions:
	default:
		return task.Invalid("kind", "must be runs, jobs, outbox, audit or flow_executions; got %q", p.Kind)
	}
	if p.Limit < 1 || p.Limit > MaxPruneBatch {
		return task.Invalid("limit", "must be 1 to %d, got %d", MaxPruneBatch, p.Limit)
	}
	return nil
}

// UpdatedBelow returns the unix ms a job's updated_at must be below for
// the job to count as last updated before p.Before. A bare time (no ID:
// the age bound) comes before every item of its millisecond, so an update
// in that millisecond is not before it. An item's position (the count
// bound's cutoff) lies inside its millisecond: a job the order puts before
// it, last updated in that same millisecond, is beyond the bound, and the
// millisecond cannot tell whether the update came before the cutoff item;
// counting it as after let jobs of one millisecond leave the count bound
// slack.
func (p PruneParams) UpdatedBelow() int64 {
	ms := UnixMS(p.Before.At)
	if p.Before.ID != "" {
		ms++
	}
	return ms
}

// PruneResult is what one Retention.Prune call did.
type PruneResult struct {
	// Deleted counts the items of the kind this call deleted (a job's
	// runs, events and key are not counted).
	Deleted int
	// Examined counts the items looked at; fewer than the limit means the
	// pass reached Before.
	Examined int
	// Next is the position of the last item examined (After when none).
	Next Cursor
}
