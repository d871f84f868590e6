package store

import (
	"context"
	"time"

	"cronsheet/task"
)

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
	// LastSlotBefore is LastSlot among the slots strictly before before
	// (zero: any), found by index however many runs of other triggers
	// (manual, backfill) lie between.
	LastSlotBefore(ctx context.Context, taskID string, before time.Time) (time.Time, error)
	// RunsAtSlot returns taskID's runs of slot (every trigger type), in
	// target order, found by the ledger's key.
	RunsAtSlot(ctx context.Context, taskID string, slot time.Time) ([]*task.Run, error)
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

// RunFinisher is implemented by drivers that finish many runs in one step
// (a group commit of the deliveries that end together). Each record stands
// on its own, exactly as by Ledger.FinishRun(rec.Run, rec.Status): errs[i]
// is that call's error for recs[i] (nil when stored). A returned error
// means nothing was stored. At most MaxStatusBatch records per call.
type RunFinisher interface {
	FinishRuns(ctx context.Context, recs []FireRecord) (errs []error, err error)
}

// RunBatch is what one RunWriter.WriteRuns call writes, in this order:
// the fire records, then the run updates, then the outcomes.
type RunBatch struct {
	// Fires are recorded as by Ledger.RecordFires.
	Fires []FireRecord
	// Updates are stored as by Ledger.UpdateRun (fenced).
	Updates []*task.Run
	// Outcomes are finished as by Ledger.FinishRun.
	Outcomes []FireRecord
}

// RunWrites is what RunWriter.WriteRuns did with each item of its batch.
type RunWrites struct {
	// Fires[i] is RecordFires's result for the batch's Fires[i].
	Fires []FireResult
	// Updated[i] is UpdateRun's error for the batch's Updates[i] (nil
	// when stored).
	Updated []error
	// Finished[i] is FinishRun's error for the batch's Outcomes[i] (nil
	// when stored).
	Finished []error
}

// RunWriter is implemented by drivers that write a burst's fire records,
// run updates and run outcomes in one step (one group commit for the
// fires, the attempts re-asserting their runs and the deliveries ending
// at the same time). The records are written first, so an update or an
// outcome may be of a run recorded by the same call. Each item stands on
// its own and is reported in RunWrites. A returned error means the call
// failed: on a driver that is also a RunFinisher nothing was stored; on
// one without (MongoDB: no multi-document transaction) the records
// inserted by then stay, as RecordFires says, and no update or outcome
// was written. At most MaxStatusBatch items of each kind per call.
type RunWriter interface {
	WriteRuns(ctx context.Context, b RunBatch) (RunWrites, error)
}
