package mongo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"cronsheet/store"
	"cronsheet/task"
)

func triggerKey(triggerID string) bson.D { return bson.D{{Key: "trigger_id", Value: triggerID}} }

// InsertRun inserts r unless its (TaskID, Slot, Target) is already in the
// ledger, and reports whether it did. The unique ledger index decides, so
// two nodes racing for a slot cannot both win (also on FerretDB). TriggerID
// and TaskID are required; an empty State is stored as pending; Error and
// Output are capped at task.MaxOutput. A TriggerID already used by another
// key is task.ErrConflict.
func (s *Store) InsertRun(ctx context.Context, r *task.Run) (bool, error) {
	d, err := runDocOf(r)
	if err != nil {
		return false, fmt.Errorf("insert run: %w", err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	ok, err := s.insertRun(ctx, d)
	if err != nil {
		return false, fmt.Errorf("insert run %s: %w", r.TriggerID, err)
	}
	return ok, nil
}

// insertRun inserts d; a duplicate ledger key is (false, nil).
func (s *Store) insertRun(ctx context.Context, d *runDoc) (bool, error) {
	_, err := s.runs.InsertOne(ctx, d)
	if err == nil {
		return true, nil
	}
	if !isDuplicate(err) {
		return false, err
	}
	// The key is taken: by another run (fired already), or by this very
	// run (stored before); either way this call did not insert it.
	_, err = s.whichDuplicate(ctx, d, err)
	return false, err
}

// whichDuplicate tells a fired slot (false, nil) from a reused trigger id
// (task.ErrConflict) after d's insert hit a unique index. Error texts name
// the index on MongoDB but not on FerretDB, so the ledger key is looked up.
// A key held by d's own trigger id is (true, nil): an earlier try of the
// same write stored it (its answer was lost), so it is d's to deliver.
func (s *Store) whichDuplicate(ctx context.Context, d *runDoc, dup error) (bool, error) {
	var held runDoc
	err := s.runs.FindOne(ctx, bson.D{{Key: "task_id", Value: d.TaskID}, {Key: "slot", Value: d.Slot},
		{Key: "target", Value: d.Target}}, options.FindOne().SetProjection(bson.D{{Key: "trigger_id", Value: 1}})).Decode(&held)
	switch {
	case err == nil:
		return held.TriggerID == d.TriggerID, nil
	case errors.Is(err, mongo.ErrNoDocuments):
		return false, fmt.Errorf("%w: trigger id %s is taken: %w", task.ErrConflict, d.TriggerID, dup)
	}
	return false, err
}

// RecordFire inserts r as InsertRun does and, only when it inserted,
// applies status as SetTaskStatus does. It reports whether it inserted.
//
// Without a transaction: it checks first that the status's task exists (a
// missing one is task.ErrNotFound and nothing is stored), then lets the
// ledger index decide, then writes the status. Should the task vanish
// between the check and the status, the run is deleted again. Interrupted
// after the insert, the slot counts as fired (it is, by this node's
// delivery) and the task shows the previous status until its next fire.
func (s *Store) RecordFire(ctx context.Context, r *task.Run, status store.TaskStatusParams) (bool, error) {
	d, err := runDocOf(r)
	if err != nil {
		return false, fmt.Errorf("record fire: %w", err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	ok, err := s.recordFire(ctx, d, status)
	if err != nil {
		return false, fmt.Errorf("record fire %s: %w", r.TriggerID, err)
	}
	return ok, nil
}

func (s *Store) recordFire(ctx context.Context, d *runDoc, status store.TaskStatusParams) (bool, error) {
	if err := s.taskExists(ctx, status.TaskID); err != nil {
		return false, fmt.Errorf("set status of task %s: %w", status.TaskID, err)
	}
	ok, err := s.insertRun(ctx, d)
	if err != nil || !ok {
		return false, err
	}
	if err := s.applyStatus(ctx, status); err != nil {
		err = fmt.Errorf("set status of task %s: %w", status.TaskID, err)
		if errors.Is(err, task.ErrNotFound) {
			_, derr := s.runs.DeleteOne(ctx, triggerKey(d.TriggerID))
			err = errors.Join(err, derr)
		}
		return false, err
	}
	return true, nil
}

// RecordFires records many fires, each as RecordFire does: results[i] says
// whether recs[i] inserted, or why it stored nothing. It checks every task
// with one query, inserts the runs with one unordered insertMany (the
// ledger index rejects fired slots one by one) and writes the statuses of
// the inserted runs with two bulk writes, so a burst of fires costs a
// handful of round trips. A returned error means the batch failed; runs
// inserted by then stay, and a retry of the same records reports them
// inserted (the ledger key is held by their own trigger ids), so they are
// delivered, never taken for duplicates. At most store.MaxStatusBatch
// records.
func (s *Store) RecordFires(ctx context.Context, recs []store.FireRecord) ([]store.FireResult, error) {
	if len(recs) > store.MaxStatusBatch {
		return nil, fmt.Errorf("record fires: %w", task.Invalid("records", "%d is more than %d", len(recs), store.MaxStatusBatch))
	}
	results := make([]store.FireResult, len(recs))
	docs := make([]*runDoc, len(recs))
	var ids []string
	for i, rec := range recs {
		var err error
		if docs[i], err = runDocOf(rec.Run); err != nil {
			results[i].Err = fmt.Errorf("record fire: %w", err)
			continue
		}
		ids = append(ids, rec.Status.TaskID)
	}
	if len(ids) == 0 {
		return results, nil
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	missing, err := s.missingTasks(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("record %d fires: %w", len(recs), err)
	}
	gone := make(map[string]bool, len(missing))
	for _, id := range missing {
		gone[id] = true
	}
	for i, rec := range recs {
		if docs[i] != nil && gone[rec.Status.TaskID] {
			results[i].Err = fmt.Errorf("record fire %s: set status of task %s: %w", rec.Run.TriggerID, rec.Status.TaskID, task.ErrNotFound)
			docs[i] = nil
		}
	}
	if err := s.insertRuns(ctx, docs, results); err != nil {
		return nil, fmt.Errorf("record %d fires: %w", len(recs), err)
	}
	if err := s.applyFireStatuses(ctx, recs, results); err != nil {
		return nil, fmt.Errorf("record %d fires: %w", len(recs), err)
	}
	return results, nil
}

// insertRuns inserts the non-nil docs unordered and sets results[i].Inserted
// or, for a reused trigger id, results[i].Err.
func (s *Store) insertRuns(ctx context.Context, docs []*runDoc, results []store.FireResult) error {
	var batch []any
	var at []int // batch index → docs index
	for i, d := range docs {
		if d != nil {
			batch = append(batch, d)
			at = append(at, i)
		}
	}
	if len(batch) == 0 {
		return nil
	}
	failed := map[int]error{}
	_, err := s.runs.InsertMany(ctx, batch, options.InsertMany().SetOrdered(false))
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) && bwe.WriteConcernError == nil {
		for _, we := range bwe.WriteErrors {
			if we.Index < 0 || we.Index >= len(at) {
				return err
			}
			failed[we.Index] = we
		}
	} else if err != nil {
		return err
	}
	for bi, i := range at {
		werr, bad := failed[bi]
		switch {
		case !bad:
			results[i].Inserted = true
		case isDuplicate(werr):
			own, e := s.whichDuplicate(ctx, docs[i], werr)
			if e != nil {
				results[i].Err = fmt.Errorf("record fire %s: %w", docs[i].TriggerID, e)
			}
			results[i].Inserted = own
		default:
			results[i].Err = fmt.Errorf("record fire %s: %w", docs[i].TriggerID, werr)
		}
	}
	return nil
}

// applyFireStatuses writes the statuses of the inserted records, in order.
func (s *Store) applyFireStatuses(ctx context.Context, recs []store.FireRecord, results []store.FireResult) error {
	var ps []store.TaskStatusParams
	for i, rec := range recs {
		if results[i].Inserted {
			ps = append(ps, rec.Status)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	return s.applyStatuses(ctx, ps)
}

// UpdateRun stores r's state, attempt, node (when set), times, error,
// output, params, deadline and feedback (when r has any: a caller holding
// a copy read before AddFeedback appended reports must not drop them),
// found by TriggerID; task.ErrNotFound when absent.
func (s *Store) UpdateRun(ctx context.Context, r *task.Run) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if err := s.updateRun(ctx, r); err != nil {
		return fmt.Errorf("update run %s: %w", r.TriggerID, err)
	}
	return nil
}

func (s *Store) updateRun(ctx context.Context, r *task.Run) error {
	set := bson.D{{Key: "state", Value: r.State}, {Key: "attempt", Value: r.Attempt},
		{Key: "fired_at", Value: store.UnixMS(r.FiredAt)}, {Key: "finished_at", Value: store.UnixMS(r.FinishedAt)},
		{Key: "next_attempt", Value: store.UnixMS(r.NextAttempt)}, {Key: "error", Value: task.Truncate(r.Error, task.MaxOutput)},
		{Key: "output", Value: task.Truncate(r.Output, task.MaxOutput)}, {Key: "deadline", Value: store.UnixMS(r.Deadline)}}
	if r.Node != "" {
		set = append(set, bson.E{Key: "node", Value: r.Node})
	}
	if fb := feedbackDocsOf(r.Feedback); fb != nil {
		set = append(set, bson.E{Key: "feedback", Value: fb})
	}
	update := bson.D{}
	if len(r.Params) > 0 {
		set = append(set, bson.E{Key: "params", Value: r.Params})
	} else {
		update = append(update, bson.E{Key: "$unset", Value: bson.D{{Key: "params", Value: ""}}})
	}
	update = append(update, bson.E{Key: "$set", Value: set})
	res, err := s.runs.UpdateOne(ctx, append(triggerKey(r.TriggerID), fenceIs(r.Fence)), update)
	if err != nil {
		return translate(err)
	}
	if res.MatchedCount == 0 {
		return s.fencedOrMissing(ctx, r.TriggerID)
	}
	return nil
}

// fenceIs filters runs at fence f; a run stored before fences existed
// has none and counts as 0.
func fenceIs(f int64) bson.E {
	if f == 0 {
		return bson.E{Key: "fence", Value: bson.D{{Key: "$in", Value: bson.A{0, nil}}}}
	}
	return bson.E{Key: "fence", Value: f}
}

// deadlineIs matches a run's deadline; the zero time also matches a run
// stored without one.
func deadlineIs(d time.Time) bson.E {
	if d.IsZero() {
		return bson.E{Key: "deadline", Value: bson.D{{Key: "$in", Value: bson.A{0, nil}}}}
	}
	return bson.E{Key: "deadline", Value: store.UnixMS(d)}
}

// fencedOrMissing explains a fenced run write that matched nothing:
// task.ErrFenced when the run exists, task.ErrNotFound when it does not.
func (s *Store) fencedOrMissing(ctx context.Context, triggerID string) error {
	if err := s.runExists(ctx, triggerID); err != nil {
		return err
	}
	return task.ErrFenced
}

// TakeOverRun makes p.Node the owner of an unfinished run still at
// p.Fence, bumping the fence, in one findOneAndUpdate
// (store.Ledger.TakeOverRun). Atomic on MongoDB; FerretDB v1 does not make
// it atomic under concurrency.
func (s *Store) TakeOverRun(ctx context.Context, p store.TakeOverParams) (*task.Run, error) {
	if p.TriggerID == "" || p.Node == "" {
		return nil, fmt.Errorf("take over run: %w", task.Invalid("trigger_id", "trigger id and node are required"))
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	filter := append(runFilter(p.TriggerID, task.RunPending, task.RunRunning, task.RunFailed), fenceIs(p.Fence),
		deadlineIs(p.Deadline))
	update := bson.D{{Key: "$set", Value: bson.D{{Key: "node", Value: p.Node}, {Key: "fence", Value: p.Fence + 1}}}}
	var d runDoc
	err := s.runs.FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		err = s.fencedOrMissing(ctx, p.TriggerID)
	}
	if err != nil {
		return nil, fmt.Errorf("take over run %s at fence %d: %w", p.TriggerID, p.Fence, translate(err))
	}
	return d.run(), nil
}

// StrandedRuns returns the unfinished runs p calls stranded, in no
// particular order (store.Ledger.StrandedRuns).
func (s *Store) StrandedRuns(ctx context.Context, p store.StrandedParams) ([]*task.Run, error) {
	if err := store.CheckLimit(p.Limit); err != nil {
		return nil, fmt.Errorf("stranded runs: %w", err)
	}
	live, quiet := bson.A{}, bson.A{}
	for _, id := range p.Live {
		live = append(live, id)
	}
	for _, id := range p.Quiet {
		live = append(live, id) // not gone
		quiet = append(quiet, id)
	}
	filter := bson.D{
		{Key: "state", Value: bson.D{{Key: "$in", Value: bson.A{string(task.RunPending), string(task.RunRunning), string(task.RunFailed)}}}},
		{Key: "$or", Value: bson.A{
			bson.D{{Key: "node", Value: bson.D{{Key: "$nin", Value: live}}}},
			bson.D{{Key: "node", Value: bson.D{{Key: "$in", Value: quiet}}}, {Key: "$or", Value: bson.A{
				bson.D{{Key: "state", Value: bson.D{{Key: "$ne", Value: string(task.RunRunning)}}}},
				bson.D{{Key: "deadline", Value: bson.D{{Key: "$lt", Value: store.UnixMS(p.QuietBefore)}}}},
			}}},
			bson.D{{Key: "node", Value: p.Self}, {Key: "fired_at", Value: bson.D{{Key: "$lt", Value: store.UnixMS(p.SelfSince)}}}},
			bson.D{{Key: "deadline", Value: bson.D{{Key: "$gt", Value: 0}, {Key: "$lt", Value: store.UnixMS(p.DeadlineBefore)}}}},
		}},
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	runs, err := s.findRuns(ctx, filter, findOpts().SetLimit(int64(p.Limit)))
	if err != nil {
		return nil, fmt.Errorf("stranded runs: %w", err)
	}
	return runs, nil
}

// FinishRun stores r as UpdateRun does and applies status as SetTaskStatus
// does: all of it or, when the run or the task is missing
// (task.ErrNotFound), nothing. Without a transaction it checks the task
// first, then updates the run (a missing run stops it there), then writes
// the status; interrupted after the run, the run is final and the task
// shows the previous status until its next fire.
func (s *Store) FinishRun(ctx context.Context, r *task.Run, status store.TaskStatusParams) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	err := s.taskExists(ctx, status.TaskID)
	if err != nil {
		err = fmt.Errorf("set status of task %s: %w", status.TaskID, err)
	}
	if err == nil {
		err = s.updateRun(ctx, r)
	}
	if err == nil {
		if err = s.applyStatus(ctx, status); err != nil {
			err = fmt.Errorf("set status of task %s: %w", status.TaskID, err)
		}
	}
	if err != nil {
		return fmt.Errorf("finish run %s: %w", r.TriggerID, err)
	}
	return nil
}

// GetRun returns the run with triggerID or task.ErrNotFound.
func (s *Store) GetRun(ctx context.Context, triggerID string) (*task.Run, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var d runDoc
	if err := s.runs.FindOne(ctx, triggerKey(triggerID)).Decode(&d); err != nil {
		return nil, fmt.Errorf("get run %s: %w", triggerID, translate(err))
	}
	return d.run(), nil
}

// ListRuns returns a task's runs, newest slot first (ties by target,
// descending), with slots before beforeSlot when it is not zero.
func (s *Store) ListRuns(ctx context.Context, taskID string, beforeSlot time.Time, limit int) ([]*task.Run, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("list runs of %s: %w", taskID, err)
	}
	before := int64(math.MaxInt64)
	if !beforeSlot.IsZero() {
		before = store.UnixMS(beforeSlot)
	}
	filter := bson.D{{Key: "task_id", Value: taskID}, {Key: "slot", Value: bson.D{{Key: "$lt", Value: before}}}}
	opts := findOpts().SetSort(bson.D{{Key: "slot", Value: -1}, {Key: "target", Value: -1}}).SetLimit(int64(limit))
	runs, err := s.findRuns(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("list runs of %s: %w", taskID, err)
	}
	return runs, nil
}

// scheduledTriggers are the trigger types LastSlot considers.
func scheduledTriggers() bson.A {
	return bson.A{string(task.TriggerSchedule), string(task.TriggerMisfire)}
}

// unfinishedStates lists the run states a node resumes: not final
// (task.RunState.Final is false) and not accepted (the target has it).
func unfinishedStates() bson.A {
	return bson.A{string(task.RunPending), string(task.RunRunning), string(task.RunFailed)}
}

// LastSlot returns the latest schedule or misfire slot of taskID, or the
// zero time.
func (s *Store) LastSlot(ctx context.Context, taskID string) (time.Time, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	filter := bson.D{{Key: "task_id", Value: taskID}, {Key: "trigger_type", Value: bson.D{{Key: "$in", Value: scheduledTriggers()}}}}
	var d runDoc
	err := s.runs.FindOne(ctx, filter, options.FindOne().SetSort(bson.D{{Key: "slot", Value: -1}}).
		SetProjection(bson.D{{Key: "slot", Value: 1}})).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("last slot of %s: %w", taskID, err)
	}
	return store.FromUnixMS(d.Slot), nil
}

// UnfinishedRuns returns a task's runs that are pending, running or
// failed, oldest slot first (accepted runs wait for their target).
func (s *Store) UnfinishedRuns(ctx context.Context, taskID string) ([]*task.Run, error) {
	filter := bson.D{{Key: "task_id", Value: taskID}, {Key: "state", Value: bson.D{{Key: "$in", Value: unfinishedStates()}}}}
	runs, err := s.findRuns(ctx, filter, findOpts().SetSort(bson.D{{Key: "slot", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("unfinished runs of %s: %w", taskID, err)
	}
	return runs, nil
}

func (s *Store) findRuns(ctx context.Context, filter any, opts *options.FindOptionsBuilder) ([]*task.Run, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.runs.Find(ctx, filter, opts)
	docs, err := findAll[runDoc](ctx, cur, err)
	if err != nil {
		return nil, err
	}
	out := make([]*task.Run, len(docs))
	for i := range docs {
		out[i] = docs[i].run()
	}
	return out, nil
}
