package store

import (
	"context"
	"time"

	"cronsheet/task"
)

// Control is what the central-timer model needs from storage beyond Store:
// targets, task states, accepted runs and their feedback, run queries and
// cleanup. store/storetest.RunControl is its conformance suite.
type Control interface {
	Targets
	// SetTaskState sets a task's state (running, stopped, closed). A change
	// bumps the task's version and releases its claim (is_claimed=0,
	// claimed_by='', lease_until=0), so the node that armed it disarms it and
	// the publish patrol re-arms it under the new state at once ("hot
	// change"). A change to running also sets the task's Anchor to p.Anchor,
	// so slots missed while it was stopped or closed are not misfires.
	// Setting the state a task already has changes nothing. A missing task
	// is task.ErrNotFound; an unknown state task.ErrInvalid. It returns the
	// task as stored afterwards.
	SetTaskState(ctx context.Context, p TaskStateParams) (*task.Task, error)

	// AcceptRun records that the target accepted run r (state
	// task.RunAccepted with r.Deadline, r.Attempt, r.Output and r.Error) and
	// applies status to its task, in one step, but only while the stored
	// run is still running under r.Fence: a run that already got its final
	// feedback (the target answered before its HTTP response returned), or
	// that another deliverer took over, is left alone and AcceptRun
	// reports false. The same write again (the run accepted under r.Fence
	// with r.Deadline: a retry after an error that hid its commit) is
	// idempotent: it stores the same and applies status, and reports
	// true. A missing run is task.ErrNotFound.
	AcceptRun(ctx context.Context, r *task.Run, status TaskStatusParams) (bool, error)
	// AddFeedback appends p.Feedback to the run's reports. A final report
	// (not Progress) ends the run: done when Status is 0, else dead with
	// the report's message as error; FinishedAt = p.Feedback.At, Output =
	// the report's output when given, Deadline cleared, and its fence
	// bumped, so that a deliverer still holding the run (the report beat
	// the target's HTTP answer) is refused any later write of it. With it,
	// in the same step, p.Status is applied to the run's task as
	// SetTaskStatus does: the caller (fire.Firer, the run's owner) decides
	// it; a zero p.Status.TaskID leaves the task alone, and a task that is
	// gone is skipped (the report is kept). Only a run that is running or
	// accepted takes feedback: a finished one is task.ErrConflict (wrapping
	// a message that says its state), an unknown trigger id
	// task.ErrNotFound, a run holding task.MaxFeedback reports
	// task.ErrConflict. It returns the run as stored afterwards.
	AddFeedback(ctx context.Context, p FeedbackParams) (*task.Run, error)
	// ExpireAccepted turns accepted runs whose deadline is before now into
	// task.RunTimeout (finished now, error saying no final feedback came,
	// fence bumped), up to limit of them, applies status(run) to each
	// one's task (a zero TaskID, or a nil status, leaves the task alone;
	// a task that is gone is skipped), and returns them. It persists the
	// timeout and the caller's status; fire.Firer.ExpireAccepted decides
	// both and tells the run's observers.
	ExpireAccepted(ctx context.Context, now time.Time, limit int, status func(*task.Run) TaskStatusParams) ([]*task.Run, error)
	// QueryRuns returns runs matching q, newest first (by fired_at, then
	// trigger_id), for paging through every run.
	QueryRuns(ctx context.Context, q RunQuery) ([]*task.Run, error)
	// CleanupRuns deletes finished runs (task.RunState.Final) as p says and
	// returns how many; unfinished and accepted runs are never deleted. At
	// most p.Limit runs go per call.
	CleanupRuns(ctx context.Context, p CleanupParams) (int, error)
}

// Targets holds targets.
type Targets interface {
	// CreateTarget stores a new target with version 1 and CreatedAt =
	// UpdatedAt = now (set on t). An existing id is task.ErrConflict. The
	// caller validates t.
	CreateTarget(ctx context.Context, t *task.Target) error
	// GetTarget returns a target or task.ErrNotFound.
	GetTarget(ctx context.Context, id string) (*task.Target, error)
	// UpdateTarget replaces a target's fields (all but ID, Version and
	// CreatedAt) and bumps its version. When ifVersion > 0 and differs from
	// the stored version it is task.ErrConflict; a missing target is
	// task.ErrNotFound. It returns the target as stored.
	UpdateTarget(ctx context.Context, t *task.Target, ifVersion int64) (*task.Target, error)
	// DeleteTarget removes a target; a missing one is task.ErrNotFound.
	// Tasks bound to it keep its id: their fires to it are recorded dead,
	// "target not found".
	DeleteTarget(ctx context.Context, id string) error
	// ListTargets pages targets in id order after afterID.
	ListTargets(ctx context.Context, afterID string, limit int) ([]*task.Target, error)
}

// TaskStateParams are the arguments of Control.SetTaskState.
type TaskStateParams struct {
	TaskID string
	State  task.State
	// Anchor is the new anchor when the task comes back to running.
	Anchor time.Time
	Now    time.Time
}

// FeedbackParams are the arguments of Control.AddFeedback.
type FeedbackParams struct {
	TriggerID string
	Feedback  task.Feedback
	// Status is applied to the run's task when Feedback is final (a zero
	// TaskID: none). The caller computes it for the final state the
	// report means (done for Status 0, else dead).
	Status TaskStatusParams
}

// RunQuery filters and pages Control.QueryRuns. Empty filters match all.
type RunQuery struct {
	TaskID string
	Target string
	State  task.RunState
	// Before is the cursor: runs strictly older than it (fired_at, then
	// trigger_id, descending). Zero starts at the newest.
	Before RunCursor
	Limit  int
}

// RunCursor is a position in the newest-first order of runs.
type RunCursor struct {
	FiredAt   time.Time
	TriggerID string
}

// CleanupParams are the arguments of Control.CleanupRuns. A zero rule is
// off; with both off nothing is deleted.
type CleanupParams struct {
	// OlderThan deletes finished runs that finished before it.
	OlderThan time.Time
	// KeepPerTask keeps each task's newest KeepPerTask finished runs (by
	// slot) and deletes the rest.
	KeepPerTask int
	// Limit bounds how many runs one call deletes (positive).
	Limit int
}

// StatusOf is status(r), or no status (a zero TaskID: the task is left
// alone) when status is nil: how a driver reads the status a caller of
// Control.ExpireAccepted hands in.
func StatusOf(status func(*task.Run) TaskStatusParams, r *task.Run) TaskStatusParams {
	if status == nil {
		return TaskStatusParams{}
	}
	return status(r)
}
