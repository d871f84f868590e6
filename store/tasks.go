package store

import (
	"context"
	"fmt"
	"time"

	"cronsheet/task"
)

// TaskHead is the part of a stored task that changes without its version
// (Tasks.TaskHeads), and the version.
type TaskHead struct {
	TaskID     string
	Version    int64
	IsEnable   int
	IsClaimed  int
	ClaimedBy  string
	LeaseUntil time.Time
	IsDone     int
	NextFire   time.Time
	LastFire   time.Time
	LastStatus string
	UpdatedAt  time.Time
}

// Apply returns a copy of t with h's fields set over it. It is nil when
// h is not of t's task and version: t's content is then not h's.
func (h TaskHead) Apply(t *task.Task) *task.Task {
	if t == nil || t.TaskID != h.TaskID || t.Version != h.Version {
		return nil
	}
	c := *t
	c.IsEnable, c.IsClaimed, c.ClaimedBy, c.LeaseUntil = h.IsEnable, h.IsClaimed, h.ClaimedBy, h.LeaseUntil
	c.IsDone, c.NextFire, c.LastFire, c.LastStatus, c.UpdatedAt = h.IsDone, h.NextFire, h.LastFire, h.LastStatus, h.UpdatedAt
	return &c
}

// Tasks holds canonical tasks and their claims. A task's version counts
// edits (ApplySync, DeleteRow); claims, leases and SetTaskStatus leave it.
type Tasks interface {
	// GetTask returns a task or task.ErrNotFound.
	GetTask(ctx context.Context, taskID string) (*task.Task, error)
	// GetTasks returns the tasks with the given ids that exist, in no
	// particular order (a fire of many tasks due together reads them at
	// once). At most MaxStatusBatch ids.
	GetTasks(ctx context.Context, taskIDs []string) ([]*task.Task, error)
	// TaskHeads returns the heads of the tasks with the given ids that
	// exist, in no particular order: what changes without an edit (claim,
	// lease, done, fire status) and the version, without the content. A
	// caller holding a task of the same version holds its content (a fire
	// of many armed tasks checks them this way). At most MaxStatusBatch
	// ids.
	TaskHeads(ctx context.Context, taskIDs []string) ([]TaskHead, error)
	// TaskIDsByTitle returns the ids of the tasks, deleted ones left out,
	// whose title param holds every one of words (ASCII letters compared
	// without case), in no particular order, at most limit. No words is
	// task.ErrInvalid.
	TaskIDsByTitle(ctx context.Context, words []string, limit int) ([]string, error)
	// OverdueTasks returns enabled, not done, not deleted tasks whose alert
	// watches for absence (Alert.Absent > 0) and whose next fire is set and
	// before `before`, soonest next fire first, at most limit. Served by an
	// index that holds only such tasks.
	OverdueTasks(ctx context.Context, before time.Time, limit int) ([]*task.Task, error)
	// ClaimTasks atomically claims up to p.Limit tasks with is_enable=1,
	// is_claimed=0, is_done=0 and, when p.ArmBy is set, an arming instant
	// (arm_at, see ParkTasks) not after p.ArmBy, soonest arming instant
	// first; it sets is_claimed=1, claimed_by=p.Owner,
	// lease_until=p.LeaseUntil and arm_at=0, and returns them. No task is
	// ever returned to two callers.
	ClaimTasks(ctx context.Context, p ClaimParams) ([]*task.Task, error)
	// ParkTasks hands back to the store, in one go, claims of owner on
	// tasks due long after the arming window: each task of ps still
	// claimed by owner and still at ps[i].Version is released with
	// arm_at=ps[i].ArmAt, so that a claim bounded by ArmBy leaves it in the
	// store (held by no node, costing no lease renewal) until that instant.
	// Any change of a task's version (an edit, a state change, a row
	// retired) sets arm_at back to 0: an edited task is claimable at once.
	// It returns the ids parked; a task not matched (edited, claim lost,
	// gone) is left as it is. A zero ArmAt is a plain release at that
	// version. More than MaxStatusBatch is task.ErrInvalid.
	ParkTasks(ctx context.Context, owner string, ps []ParkParams) ([]string, error)
	// RenewLeases extends lease_until of every task claimed by owner.
	RenewLeases(ctx context.Context, owner string, until time.Time) (int, error)
	// ListClaimed returns the ids of tasks claimed by owner, with their
	// is_enable, is_done and version, so a node can compare with what it armed.
	ListClaimed(ctx context.Context, owner string) ([]ClaimedTask, error)
	// ReleaseTask sets is_claimed=0 on a task claimed by owner. A task that
	// owner does not hold (any more) is left alone without error; a missing
	// task is task.ErrNotFound.
	ReleaseTask(ctx context.Context, taskID, owner string) error
	// ReleaseClaims sets is_claimed=0 on every task claimed by owner (a
	// node leaving) at once, and returns how many.
	ReleaseClaims(ctx context.Context, owner string) (int, error)
	// ReleaseExpired sets is_claimed=0 on every claim whose lease ended
	// before now; it returns how many.
	ReleaseExpired(ctx context.Context, now time.Time) (int, error)
	// PurgeDeleted removes tasks whose row was deleted and that no node holds.
	PurgeDeleted(ctx context.Context) (int, error)
	// RetireRowless marks deleted and disabled (as DeleteRow does) the
	// tasks claimed by owner whose row is gone, whoever removed it: another
	// tool may delete rows straight in the database, and nothing then
	// retires their tasks. It returns the ids retired. A task is retired
	// only at the version read with its missing row, so one synced again
	// meanwhile (its row put back) stays. It reads only owner's claims and
	// their rows by key (indexed): a node's claims are the tasks that can
	// fire there, so each node's pass covers every task that fires.
	RetireRowless(ctx context.Context, owner string) ([]string, error)
	// SetTaskStatus records a task's fire feedback and mirrors it onto its
	// source row (next_fire, last_fire, last_status; is_done when Done).
	SetTaskStatus(ctx context.Context, p TaskStatusParams) error
	// SetTaskStatuses applies each of ps, in order, like SetTaskStatus, in
	// one transaction (used when arming a batch): all of them or, when one
	// fails (a missing task is task.ErrNotFound), none. More than
	// MaxStatusBatch statuses is task.ErrInvalid; none is a no-op.
	SetTaskStatuses(ctx context.Context, ps []TaskStatusParams) error
}

// MaxStatusBatch is the most statuses Tasks.SetTaskStatuses takes in one
// call.
const MaxStatusBatch = 10000

// ClaimParams are the arguments of Tasks.ClaimTasks.
type ClaimParams struct {
	Owner      string
	LeaseUntil time.Time
	Limit      int
	// ArmBy, when set, leaves tasks parked until after it (Tasks.ParkTasks)
	// unclaimed; zero claims them too.
	ArmBy time.Time
}

// ParkParams names one claim Tasks.ParkTasks hands back: the task, the
// version it was armed at, and the instant from which it may be claimed
// again.
type ParkParams struct {
	TaskID  string
	Version int64
	ArmAt   time.Time
}

// ClaimedTask is a summary of a claimed task (Tasks.ListClaimed).
type ClaimedTask struct {
	TaskID   string
	IsEnable int
	IsDone   int
	Version  int64
}

// TaskStatusParams are the arguments of Tasks.SetTaskStatus (and of the
// status that Ledger.RecordFire and Ledger.FinishRun apply). Zero times leave
// the stored value; SetNextFire with a zero NextFire clears it. Done marks
// the task done and, in the same write, releases its claim, whoever holds
// it: a done task is claimed by no node (none may claim it until an edit
// makes it not done), so the reconcile patrol has nothing to hand back
// for it — at a thousand jobs finishing a second, that release was a
// second write per job.
type TaskStatusParams struct {
	TaskID      string
	NextFire    time.Time
	SetNextFire bool
	LastFire    time.Time
	LastStatus  string
	// StatusSlot, when set with LastStatus, is the slot of the run whose
	// state LastStatus is (an outcome, an acceptance, a timeout): the task
	// keeps the latest such slot, and LastStatus is written only when
	// StatusSlot is not before it. So an outcome applied after a newer
	// run's (a burst's outcomes applied in any order, an outcome retried
	// after an error that hid its commit) does not put back an older
	// status: a task's last status follows its newest run that reported
	// one. Zero writes LastStatus as given (a fire's "running", arming's
	// "unschedulable").
	StatusSlot time.Time
	Done       bool
}

// CheckTitleQuery checks the arguments of Tasks.TaskIDsByTitle for every
// driver: at least one word and a positive limit.
func CheckTitleQuery(words []string, limit int) error {
	if err := CheckLimit(limit); err != nil {
		return fmt.Errorf("tasks by title: %w", err)
	}
	if len(words) == 0 {
		return fmt.Errorf("tasks by title: %w", task.Invalid("title", "needs a word"))
	}
	return nil
}
