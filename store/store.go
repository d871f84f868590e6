// Package store defines the storage cronsheet needs: scenario rows, canonical
// tasks, the fire ledger (runs) and the outbox. Drivers live in sub-packages
// (store/sqlite; store/mongo later) and all pass the conformance suite in
// store/storetest.
//
// Drivers translate their errors at this boundary: a missing document is
// task.ErrNotFound, a unique-key or version clash is task.ErrConflict.
// Drivers keep times to the millisecond.
package store

import (
	"context"
	"fmt"
	"time"

	"cronsheet/task"
)

// Store is everything patrols, executors and the API need from storage.
// Every method is safe for concurrent use.
type Store interface {
	Rows
	Tasks
	Ledger
	Outbox
	Control
	Jobs
	Nodes
	// Close releases the store's resources.
	Close() error
}

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
	Done        bool
}

// FireRecord is one fire for Ledger.RecordFires.
type FireRecord struct {
	Run    *task.Run
	Status TaskStatusParams
}

// FireResult is what Ledger.RecordFires did with one FireRecord.
type FireResult struct {
	Inserted bool  // false with a nil Err: the slot was already fired
	Err      error // why nothing was stored for this record
}

// Ledger is the fire ledger: one Run per (task_id, slot, target).
type Ledger interface {
	// InsertRun inserts r unless a run with the same (TaskID, Slot, Target)
	// exists. It reports whether this call inserted it: false means the slot
	// was already fired and the caller must not deliver.
	InsertRun(ctx context.Context, r *task.Run) (bool, error)
	// RecordFire inserts r like InsertRun and, only when it inserted, applies
	// status (like SetTaskStatus) in the same transaction. It reports whether
	// it inserted: false leaves the task's status untouched. When applying
	// status fails (a missing task is task.ErrNotFound) nothing is stored.
	RecordFire(ctx context.Context, r *task.Run, status TaskStatusParams) (bool, error)
	// RecordFires is RecordFire for many fires in one transaction (a group
	// commit, so a burst of fires costs one commit). Each item stands on its
	// own: results[i] says whether recs[i] inserted, or why it stored
	// nothing. A returned error means the transaction failed and nothing
	// was stored. At most MaxStatusBatch items.
	RecordFires(ctx context.Context, recs []FireRecord) ([]FireResult, error)
	// UpdateRun stores r's state, attempt, times, error and output, found by
	// TriggerID, only while the stored run still has r.Fence (the writer
	// still owns it): a run taken over since is task.ErrFenced and nothing
	// is stored; task.ErrNotFound when absent.
	UpdateRun(ctx context.Context, r *task.Run) error
	// FinishRun stores r like UpdateRun (fenced the same way) and applies
	// status (like SetTaskStatus) in the same transaction: all of it or,
	// when either fails (a missing run or task is task.ErrNotFound, a
	// moved fence task.ErrFenced), nothing.
	FinishRun(ctx context.Context, r *task.Run, status TaskStatusParams) error
	// TakeOverRun makes p.Node the owner of an unfinished run (pending,
	// running, failed) whose stored fence is still p.Fence, bumping the
	// fence, in one conditional single-row write. It returns the run as
	// stored afterwards. A run that finished, or that someone else took
	// over first, is task.ErrFenced; a missing run task.ErrNotFound.
	TakeOverRun(ctx context.Context, p TakeOverParams) (*task.Run, error)
	// StrandedRuns returns unfinished runs that nobody is delivering, as p
	// describes them, at most p.Limit (in an order of the driver's).
	StrandedRuns(ctx context.Context, p StrandedParams) ([]*task.Run, error)
	// GetRun returns the run with triggerID or task.ErrNotFound.
	GetRun(ctx context.Context, triggerID string) (*task.Run, error)
	// ListRuns returns a task's runs, newest slot first, at most limit, with
	// slots strictly before beforeSlot when it is not zero.
	ListRuns(ctx context.Context, taskID string, beforeSlot time.Time, limit int) ([]*task.Run, error)
	// LastSlot returns the latest slot in the ledger for taskID with trigger
	// type schedule or misfire, or the zero time.
	LastSlot(ctx context.Context, taskID string) (time.Time, error)
	// UnfinishedRuns returns a task's runs that are not in a final state
	// (pending, running, failed), so a node that takes over can resume them.
	UnfinishedRuns(ctx context.Context, taskID string) ([]*task.Run, error)
	// LastSlots is LastSlot for many tasks at once (at most
	// MaxStatusBatch): tasks without a slot are absent from the map.
	LastSlots(ctx context.Context, taskIDs []string) (map[string]time.Time, error)
	// UnfinishedRunsOf is UnfinishedRuns for many tasks at once (at most
	// MaxStatusBatch): runs by task id, each task's oldest slot first;
	// tasks without any are absent.
	UnfinishedRunsOf(ctx context.Context, taskIDs []string) (map[string][]*task.Run, error)
}

// TakeOverParams are the arguments of Ledger.TakeOverRun.
type TakeOverParams struct {
	TriggerID string
	// Fence is the fence the caller read: the take-over happens only while
	// the stored run still has it.
	Fence int64
	// Deadline is the deadline the caller read (the zero time for none):
	// the take-over happens only while the stored run still has it too.
	// The owner's every attempt writes a new deadline before it calls, so
	// a take-over decided on an older read of the run (an attempt since
	// started) is refused as task.ErrFenced rather than sent twice.
	Deadline time.Time
	// Node becomes the run's owner.
	Node string
}

// StrandedParams are the arguments of Ledger.StrandedRuns. An unfinished
// run is stranded when its owner is among neither Live nor Quiet (gone),
// or when its owner is Quiet and it is not running or its deadline is
// before QuietBefore (no attempt of it can still be in flight), or when it
// is Self's and was fired before SelfSince (a previous process of this
// node id fired it), or when its Deadline (not zero) is before
// DeadlineBefore.
type StrandedParams struct {
	Live []string
	// Quiet are nodes that stopped beating but may still run (a process
	// on another host, or a stalled one): their running runs may still be
	// in flight until their deadline.
	Quiet          []string
	QuietBefore    time.Time
	Self           string
	SelfSince      time.Time
	DeadlineBefore time.Time
	Limit          int
}

// Clock is implemented by stores whose server has a clock of its own
// (MongoDB): leases and heartbeats are measured on it, so nodes whose
// clocks disagree still agree on when a lease ends. A store without it
// (SQLite: its processes share one host clock) leaves each node its own.
type Clock interface {
	// ServerTime returns the server's current time.
	ServerTime(ctx context.Context) (time.Time, error)
}

// Nodes is the registry of the processes sharing the store: each beats
// while it runs, so the others know whose runs and claims are orphaned.
type Nodes interface {
	// RegisterNode records n as running. Another process already
	// registered under n.ID (another Incarnation) whose last beat is after
	// staleBefore is task.ErrConflict: two live processes must not share
	// a node id. A stale entry is replaced.
	RegisterNode(ctx context.Context, n Node, staleBefore time.Time) error
	// BeatNode records a heartbeat of n (BeatAt, Held). When the entry
	// under n.ID belongs to another incarnation it is task.ErrConflict; a
	// missing entry is re-created.
	BeatNode(ctx context.Context, n Node) error
	// RemoveNode deletes n's entry when it still belongs to incarnation
	// (a graceful stop, so the others take its work at once).
	RemoveNode(ctx context.Context, id, incarnation string) error
	// ListNodes returns every registered node, by id.
	ListNodes(ctx context.Context) ([]Node, error)
}

// Node is one registered process.
type Node struct {
	ID string `json:"node_id"`
	// Incarnation tells apart two processes that use the same ID.
	Incarnation string `json:"incarnation"`
	Version     string `json:"version"`
	// Host and PID say where the process runs, so a restart on the same
	// host can tell a crashed predecessor (no such process) from a live one.
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	BeatAt    time.Time `json:"beat_at"`
	// Held is how many tasks the node held at its last beat.
	Held int `json:"held"`
}

// Outbox keeps deliveries that are recorded instead of sent.
type Outbox interface {
	// AddOutbox stores m and sets its ID and CreatedAt when zero. A message
	// whose non-empty TriggerID is already in the outbox is not stored again
	// (a delivery resumed after a crash that had already reached the outbox):
	// m takes the stored message's ID and CreatedAt and nil is returned, so
	// the outbox holds each run exactly once.
	AddOutbox(ctx context.Context, m *task.OutboxMessage) error
	// ListOutbox returns messages newest first, with ID < beforeID when
	// beforeID > 0, at most limit.
	ListOutbox(ctx context.Context, beforeID int64, limit int) ([]*task.OutboxMessage, error)
}
