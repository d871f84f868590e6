package store

import (
	"context"
	"fmt"
	"time"

	"cronsheet/task"
)

// Rows holds scenario source rows.
type Rows interface {
	// InsertRow stores a new row with is_fetched=0 and version 1. The row's ID
	// must be set (else task.ErrInvalid); an existing (scenario, id) is
	// task.ErrConflict.
	InsertRow(ctx context.Context, row *task.Row) error
	// GetRow returns one row or task.ErrNotFound.
	GetRow(ctx context.Context, scenario, id string) (*task.Row, error)
	// UpdateRowFields replaces the row's user fields, sets is_fetched=0 and
	// bumps its version. When ifVersion > 0 and differs from the stored
	// version the call fails with task.ErrConflict. It returns the new row.
	UpdateRowFields(ctx context.Context, p UpdateRowParams) (*task.Row, error)
	// DeleteRow removes the row and disables its task (is_enable=0,
	// deleted, version+1) in one step, so the delete patrol disarms it. A
	// missing row is task.ErrNotFound.
	DeleteRow(ctx context.Context, scenario, id string) error
	// DeleteRowIf is DeleteRow when the row's version is ifVersion (0:
	// any); another version is task.ErrConflict and the row stays, so a
	// delete planned on a row as read does not remove an edit made since.
	DeleteRowIf(ctx context.Context, scenario, id string, ifVersion int64) error
	// ListRows pages rows of a scenario in id order after afterID.
	ListRows(ctx context.Context, scenario, afterID string, limit int) ([]*task.Row, error)
	// ListUnfetchedRows returns up to limit rows with is_fetched=0, any scenario.
	ListUnfetchedRows(ctx context.Context, limit int) ([]*task.Row, error)
	// ApplySync records the sync patrol's verdict on one row atomically: when
	// the row still has p.RowVersion it upserts p.Task (if not nil), sets the
	// row's is_fetched=1, is_active and error. A row edited in the meantime is
	// left alone and ApplySync returns task.ErrConflict; a missing row is
	// task.ErrNotFound. ApplySync does not change the row's version.
	ApplySync(ctx context.Context, p ApplySyncParams) error
}

// ErrTaskIDTaken is the task.ErrConflict of Rows.ApplySync when the row's
// task id belongs to another (scenario, row): the row is in error. Any
// other conflict of ApplySync is a race (the row or its task changed
// meanwhile, another node synced it first) and the row is synced again.
var ErrTaskIDTaken = fmt.Errorf("task id belongs to another row: %w", task.ErrConflict)

// UpdateRowParams are the arguments of Rows.UpdateRowFields.
type UpdateRowParams struct {
	Scenario  string
	ID        string
	Fields    map[string]any
	IfVersion int64 // 0 = no check
}

// ApplySyncParams are the arguments of Rows.ApplySync.
type ApplySyncParams struct {
	Scenario   string
	RowID      string
	RowVersion int64
	// Task is the mapped task, or nil when the row is invalid or inactive and
	// has no valid mapping. When not nil it is upserted by TaskID:
	//   - a new task is inserted with version 1;
	//   - an existing task whose schedule-relevant fields (CronPara, TZ,
	//     ExecuteType, StartTime, EndTime, Misfire) changed, or that comes
	//     back (it was deleted, or disabled and is now enabled), gets Anchor =
	//     Task.Anchor, is_claimed=0, is_done=0, version+1;
	//   - any other change updates the fields and bumps version, keeping the
	//     stored Anchor (an interval keeps its phase across content edits)
	//     and the claim (the armed job re-reads the task at each fire);
	//   - a task_id owned by another (scenario,row) is ErrTaskIDTaken, unless
	//     that row was deleted (its task awaits purge): then the task moves to
	//     this row, rescheduled.
	//   - the row's task under another task_id (the id field was edited) is
	//     retired as by DeleteRow (is_enable=0, deleted, version+1).
	//   - an existing task (also a deleted one that comes back) keeps its
	//     stored State: Control.SetTaskState owns it, and a row's mapping
	//     always says running. A new task takes Task.State.
	// IsEnable follows Task.IsEnable.
	Task *task.Task
	// DisableTask, when Task is nil, sets is_enable=0 on the row's existing
	// task (an invalid edit must stop the old schedule).
	DisableTask bool
	IsActive    int    // the row's is_active: 1, 0 or -1
	Error       string // the reason, when IsActive is -1
	Now         time.Time
}
