package mongo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"cronsheet/store"
	"cronsheet/task"
)

// What the central-timer model needs beyond store.Store (store.Control):
// task states, accepted runs and their feedback, run queries and cleanup.
// Targets are in targets.go. As everywhere in this driver there is no
// transaction: each method says in which order it writes and what an
// interruption leaves.

// SetTaskState sets a task's state. A change bumps the version (compared
// and set: a task edited in between is read again), releases the claim and,
// when the state becomes running, sets the anchor to p.Anchor (p.Now when
// zero, else now), all in one update of the task document. The same state
// again changes nothing. A missing task is task.ErrNotFound, an unknown
// state task.ErrInvalid. It returns the task as stored.
func (s *Store) SetTaskState(ctx context.Context, p store.TaskStateParams) (*task.Task, error) {
	if !p.State.Valid() {
		return nil, fmt.Errorf("set state of task %s: %w", p.TaskID,
			task.Invalid("state", "must be running, stopped or closed; got %q", p.State))
	}
	now := store.UnixMS(p.Now)
	if now == 0 {
		now = s.nowMS()
	}
	anchor := store.UnixMS(p.Anchor)
	if anchor == 0 {
		anchor = now
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	t, err := s.setTaskState(ctx, p, anchor, now)
	if err != nil {
		return nil, fmt.Errorf("set state of task %s to %s: %w", p.TaskID, p.State, err)
	}
	return t, nil
}

func (s *Store) setTaskState(ctx context.Context, p store.TaskStateParams, anchor, now int64) (*task.Task, error) {
	for range maxVersionTries {
		var old taskDoc
		if err := s.tasks.FindOne(ctx, taskKey(p.TaskID)).Decode(&old); err != nil {
			return nil, translate(err)
		}
		if old.Content.State == p.State {
			return old.task(), nil
		}
		set := bson.D{{Key: "state", Value: p.State}, {Key: "version", Value: old.Version + 1},
			{Key: "updated_at", Value: now}, {Key: "arm_at", Value: int64(0)},
			{Key: "is_claimed", Value: 0}, {Key: "claimed_by", Value: ""}, {Key: "lease_until", Value: 0}}
		if p.State == task.StateRunning {
			set = append(set, bson.E{Key: "anchor", Value: anchor})
		}
		var d taskDoc
		err := s.tasks.FindOneAndUpdate(ctx, bson.D{{Key: "task_id", Value: p.TaskID}, {Key: "version", Value: old.Version}},
			bson.D{{Key: "$set", Value: set}}, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
		if err == nil {
			return d.task(), nil
		}
		if !errors.Is(err, mongo.ErrNoDocuments) {
			return nil, err
		}
		// Edited (or deleted) since it was read: read it again.
	}
	return nil, fmt.Errorf("%w: the task changed %d times while its state was set", task.ErrConflict, maxVersionTries)
}

// runFilter selects the run triggerID while it is in one of states.
func runFilter(triggerID string, states ...task.RunState) bson.D {
	in := make(bson.A, len(states))
	for i, st := range states {
		in[i] = string(st)
	}
	return bson.D{{Key: "trigger_id", Value: triggerID}, {Key: "state", Value: bson.D{{Key: "$in", Value: in}}}}
}

// AcceptRun stores r as accepted (with its deadline, attempt, output and
// error) only while the stored run is running, then applies status as
// SetTaskStatus does. The state is part of the update's filter, so a run
// that already got its final feedback is left alone (false). A missing run
// or task is task.ErrNotFound, and then nothing is stored.
//
// Without a transaction it checks the task first, then updates the run,
// then writes the status; interrupted after the run, the run is accepted
// and the task shows the previous status until the accept is retried: a
// run accepted at r's fence with r's deadline is this write's, so the
// retry matches it again, writes the status and reports true. A final
// report that lands between the run's update and the status would be
// overwritten by "accepted", so the run's state is read again afterwards
// and, when it is no longer accepted, written as the task's last status.
func (s *Store) AcceptRun(ctx context.Context, r *task.Run, status store.TaskStatusParams) (bool, error) {
	if r == nil || r.TriggerID == "" {
		return false, fmt.Errorf("accept run: %w", task.Invalid("trigger_id", "required"))
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	ok, err := s.acceptRun(ctx, r, status)
	if err != nil {
		return false, fmt.Errorf("accept run %s: %w", r.TriggerID, err)
	}
	return ok, nil
}

func (s *Store) acceptRun(ctx context.Context, r *task.Run, status store.TaskStatusParams) (bool, error) {
	if err := s.taskExists(ctx, status.TaskID); err != nil {
		return false, fmt.Errorf("set status of task %s: %w", status.TaskID, err)
	}
	set := bson.D{{Key: "state", Value: task.RunAccepted}, {Key: "deadline", Value: store.UnixMS(r.Deadline)},
		{Key: "attempt", Value: r.Attempt}, {Key: "output", Value: task.Truncate(r.Output, task.MaxOutput)},
		{Key: "error", Value: task.Truncate(r.Error, task.MaxOutput)}}
	// Running, or already accepted by this same write (same fence, same
	// deadline): a retry after the run's update but before the status
	// (interrupted, or an error that hid the update) matches again and
	// goes on to write the status, so the accept completes.
	filter := bson.D{{Key: "trigger_id", Value: r.TriggerID}, fenceIs(r.Fence), {Key: "$or", Value: bson.A{
		bson.D{{Key: "state", Value: task.RunRunning}},
		bson.D{{Key: "state", Value: task.RunAccepted}, {Key: "deadline", Value: store.UnixMS(r.Deadline)}},
	}}}
	res, err := s.runs.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: set}})
	if err != nil {
		return false, err
	}
	if res.MatchedCount == 0 {
		// Missing, or no longer running?
		return false, s.runExists(ctx, r.TriggerID)
	}
	if err := s.applyStatus(ctx, status); err != nil {
		return false, fmt.Errorf("set status of task %s: %w", status.TaskID, err)
	}
	// A final report that came between the run's update and the status
	// wrote its own status first: it must stay the last one.
	var now runDoc
	err = s.runs.FindOne(ctx, triggerKey(r.TriggerID), options.FindOne().SetProjection(bson.D{{Key: "state", Value: 1}})).Decode(&now)
	if err == nil && now.State != task.RunAccepted {
		err = s.applyStatus(ctx, store.TaskStatusParams{TaskID: status.TaskID, LastStatus: string(now.State),
			StatusSlot: status.StatusSlot})
	}
	if err != nil {
		return false, fmt.Errorf("run accepted, but check its state: %w", translate(err))
	}
	return true, nil
}

// runExists returns task.ErrNotFound when there is no run triggerID.
func (s *Store) runExists(ctx context.Context, triggerID string) error {
	err := s.runs.FindOne(ctx, triggerKey(triggerID), options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	return translate(err)
}

// AddFeedback appends p.Feedback to the run's reports with one $push whose
// filter holds the run's state (running or accepted) and its room (fewer
// than task.MaxFeedback reports), so neither a finished run nor a full one
// takes it. A final report ends the run in the same update (done, or dead
// with the report's message as error, its fence bumped so that a
// deliverer still holding it is refused its later writes), then p.Status
// (the caller's; none for a zero TaskID) is applied to its task and
// mirrored onto its row; interrupted in between, the run is final and the
// task shows the previous status until its next one. A task that is gone
// by then is not an error: the report is kept.
//
// An empty TriggerID or a report over its bounds is task.ErrInvalid, an
// unknown run task.ErrNotFound, a finished or full run task.ErrConflict. A
// zero At is now.
func (s *Store) AddFeedback(ctx context.Context, p store.FeedbackParams) (*task.Run, error) {
	if p.TriggerID == "" {
		return nil, fmt.Errorf("add feedback: %w", task.Invalid("trigger_id", "required"))
	}
	fb := p.Feedback
	if err := fb.Validate(); err != nil {
		return nil, fmt.Errorf("add feedback to run %s: %w", p.TriggerID, err)
	}
	if fb.At.IsZero() {
		fb.At = s.now()
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	r, err := s.addFeedback(ctx, p.TriggerID, &fb, p.Status)
	if err != nil {
		return nil, fmt.Errorf("add feedback to run %s: %w", p.TriggerID, err)
	}
	return r, nil
}

func (s *Store) addFeedback(ctx context.Context, triggerID string, fb *task.Feedback, status store.TaskStatusParams) (*task.Run, error) {
	filter := append(runFilter(triggerID, task.RunRunning, task.RunAccepted),
		bson.E{Key: fmt.Sprintf("feedback.%d", task.MaxFeedback-1), Value: bson.D{{Key: "$exists", Value: false}}})
	update := bson.D{{Key: "$push", Value: bson.D{{Key: "feedback", Value: feedbackDocOf(fb)}}}}
	var final task.RunState
	if !fb.Progress {
		var msg string
		final, msg = fb.Outcome()
		set := bson.D{{Key: "state", Value: final}, {Key: "finished_at", Value: store.UnixMS(fb.At)},
			{Key: "next_attempt", Value: 0}, {Key: "deadline", Value: 0},
			{Key: "error", Value: task.Truncate(msg, task.MaxOutput)}}
		if fb.Output != "" {
			set = append(set, bson.E{Key: "output", Value: fb.Output})
		}
		update = append(update, bson.E{Key: "$set", Value: set}, bson.E{Key: "$inc", Value: bson.D{{Key: "fence", Value: 1}}})
	}
	var d runDoc
	err := s.runs.FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, s.whyNoFeedback(ctx, triggerID)
	}
	if err != nil {
		return nil, err
	}
	if final != "" && status.TaskID != "" {
		err := s.applyStatus(ctx, status)
		if err != nil && !errors.Is(err, task.ErrNotFound) {
			return nil, fmt.Errorf("run %s, but set status of task %s: %w", final, status.TaskID, err)
		}
	}
	return d.run(), nil
}

// whyNoFeedback says why a run took no feedback: it is missing
// (task.ErrNotFound), finished or full (task.ErrConflict).
func (s *Store) whyNoFeedback(ctx context.Context, triggerID string) error {
	var d runDoc
	if err := s.runs.FindOne(ctx, triggerKey(triggerID)).Decode(&d); err != nil {
		return translate(err)
	}
	switch {
	case d.State != task.RunRunning && d.State != task.RunAccepted:
		return fmt.Errorf("%w: the run is %s and takes no more feedback", task.ErrConflict, d.State)
	case len(d.Feedback) >= task.MaxFeedback:
		return fmt.Errorf("%w: the run holds %d reports, the most it keeps", task.ErrConflict, len(d.Feedback))
	}
	// Changed between the update and this read (another report came).
	return fmt.Errorf("%w: the run changed while the report was added; send it again", task.ErrConflict)
}

// ExpireAccepted times out accepted runs whose deadline is before now, the
// earliest deadline first, up to limit: each becomes task.RunTimeout,
// finished now, with an error naming its deadline (the deadline stays),
// its fence bumped (a cancel of it as accepted is refused).
// Then their tasks' last_status is set to timeout and mirrored onto their
// rows (tasks that are gone are skipped). Each run is updated on its own,
// conditional on its still being accepted, so a final report that comes in
// between wins and that run is not returned. Interrupted before the
// statuses, the runs are timed out and their tasks show the previous status
// until their next one.
func (s *Store) ExpireAccepted(ctx context.Context, now time.Time, limit int, status func(*task.Run) store.TaskStatusParams) ([]*task.Run, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("expire accepted runs: %w", err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	out, err := s.expireAccepted(ctx, store.UnixMS(now), limit, status)
	if err != nil {
		return nil, fmt.Errorf("expire accepted runs: %w", err)
	}
	return out, nil
}

func (s *Store) expireAccepted(ctx context.Context, now int64, limit int, status func(*task.Run) store.TaskStatusParams) ([]*task.Run, error) {
	filter := bson.D{{Key: "state", Value: task.RunAccepted}, {Key: "deadline", Value: bson.D{{Key: "$lt", Value: now}}}}
	cur, err := s.runs.Find(ctx, filter, findOpts().SetSort(bson.D{{Key: "deadline", Value: 1}}).SetLimit(int64(limit)).
		SetProjection(bson.D{{Key: "trigger_id", Value: 1}, {Key: "deadline", Value: 1}}))
	due, err := findAll[runDoc](ctx, cur, err)
	if err != nil {
		return nil, err
	}
	var out []*task.Run
	var statuses []store.TaskStatusParams
	for _, r := range due {
		msg := fmt.Sprintf("no final feedback before the deadline %s",
			store.FromUnixMS(r.Deadline).Format(time.RFC3339Nano))
		var d runDoc
		err := s.runs.FindOneAndUpdate(ctx, runFilter(r.TriggerID, task.RunAccepted),
			bson.D{{Key: "$set", Value: bson.D{{Key: "state", Value: task.RunTimeout}, {Key: "finished_at", Value: now},
				{Key: "error", Value: msg}}}, {Key: "$inc", Value: bson.D{{Key: "fence", Value: 1}}}},
			options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
		if errors.Is(err, mongo.ErrNoDocuments) {
			continue // finished by a report in between
		}
		if err != nil {
			return nil, fmt.Errorf("time out run %s: %w", r.TriggerID, err)
		}
		r := d.run()
		out = append(out, r)
		if p := store.StatusOf(status, r); p.TaskID != "" {
			statuses = append(statuses, p)
		}
	}
	if err := s.applyExistingStatuses(ctx, statuses); err != nil {
		return nil, err
	}
	return out, nil
}

// applyExistingStatuses applies ps, in order, to those of their tasks that
// exist.
func (s *Store) applyExistingStatuses(ctx context.Context, ps []store.TaskStatusParams) error {
	if len(ps) == 0 {
		return nil
	}
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.TaskID
	}
	missing, err := s.missingTasks(ctx, ids)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		gone := make(map[string]bool, len(missing))
		for _, id := range missing {
			gone[id] = true
		}
		var keep []store.TaskStatusParams
		for _, p := range ps {
			if !gone[p.TaskID] {
				keep = append(keep, p)
			}
		}
		ps = keep
	}
	if len(ps) == 0 {
		return nil
	}
	err = s.applyStatuses(ctx, ps)
	if errors.Is(err, task.ErrNotFound) {
		return nil // a task deleted since the check: nothing to show it on
	}
	return err
}

// QueryRuns returns runs matching q, newest first by (fired_at, trigger_id),
// strictly after the cursor q.Before when it is set. See indexes.go for the
// indexes each filter uses.
func (s *Store) QueryRuns(ctx context.Context, q store.RunQuery) ([]*task.Run, error) {
	if err := store.CheckLimit(q.Limit); err != nil {
		return nil, fmt.Errorf("query runs: %w", err)
	}
	filter := bson.D{}
	if q.TaskID != "" {
		filter = append(filter, bson.E{Key: "task_id", Value: q.TaskID})
	}
	if q.Target != "" {
		filter = append(filter, bson.E{Key: "target", Value: q.Target})
	}
	if q.State != "" {
		filter = append(filter, bson.E{Key: "state", Value: q.State})
	}
	if !q.Before.FiredAt.IsZero() || q.Before.TriggerID != "" {
		at := store.UnixMS(q.Before.FiredAt)
		filter = append(filter, bson.E{Key: "$or", Value: bson.A{
			bson.D{{Key: "fired_at", Value: bson.D{{Key: "$lt", Value: at}}}},
			bson.D{{Key: "fired_at", Value: at}, {Key: "trigger_id", Value: bson.D{{Key: "$lt", Value: q.Before.TriggerID}}}},
		}})
	}
	opts := findOpts().SetSort(bson.D{{Key: "fired_at", Value: -1}, {Key: "trigger_id", Value: -1}}).
		SetLimit(int64(q.Limit))
	runs, err := s.findRuns(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("query runs: %w", err)
	}
	return runs, nil
}

// finalStates lists the run states that are final (task.RunState.Final):
// the only ones CleanupRuns deletes.
func finalStates() bson.A {
	return bson.A{string(task.RunDone), string(task.RunDead), string(task.RunRejected),
		string(task.RunTimeout), string(task.RunCancelled), string(task.RunSkipped)}
}

// CleanupRuns deletes finished runs, at most p.Limit: first, per task,
// those beyond its newest p.KeepPerTask finished runs by slot (ties by
// target), then those that finished before p.OlderThan (earliest first).
// In that order a run goes when either rule, applied to the runs as they
// were, says so. Runs in other states (pending, running, failed, accepted)
// are never deleted: every delete filters on the final states again. Each
// rule finds a batch of ids, then deletes them with deleteMany;
// interrupted, the runs deleted so far are gone and the next call goes on.
func (s *Store) CleanupRuns(ctx context.Context, p store.CleanupParams) (int, error) {
	if p.Limit <= 0 {
		return 0, fmt.Errorf("cleanup runs: %w", task.Invalid("limit", "must be positive, got %d", p.Limit))
	}
	if p.KeepPerTask < 0 {
		return 0, fmt.Errorf("cleanup runs: %w", task.Invalid("keep_per_task", "must not be negative, got %d", p.KeepPerTask))
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	n := 0
	if p.KeepPerTask > 0 {
		del, err := s.cleanupPerTask(ctx, p.KeepPerTask, p.Limit)
		n += del
		if err != nil {
			return n, fmt.Errorf("cleanup runs beyond %d per task: %w", p.KeepPerTask, err)
		}
	}
	if !p.OlderThan.IsZero() && n < p.Limit {
		filter := bson.D{{Key: "state", Value: bson.D{{Key: "$in", Value: finalStates()}}},
			{Key: "finished_at", Value: bson.D{{Key: "$lt", Value: store.UnixMS(p.OlderThan)}}}}
		del, err := s.deleteRuns(ctx, filter, bson.D{{Key: "finished_at", Value: 1}}, 0, p.Limit-n)
		n += del
		if err != nil {
			return n, fmt.Errorf("cleanup runs finished before %s: %w", p.OlderThan.Format(time.RFC3339), err)
		}
	}
	return n, nil
}

// cleanupPerTask deletes, up to limit, finished runs beyond each task's
// newest keep. One aggregation finds the tasks with more than keep finished
// runs; then each of them costs a find and a delete.
func (s *Store) cleanupPerTask(ctx context.Context, keep, limit int) (int, error) {
	cur, err := s.runs.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "state", Value: bson.D{{Key: "$in", Value: finalStates()}}}}}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$task_id"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		{{Key: "$match", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$gt", Value: keep}}}}}},
		{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	}, options.Aggregate().SetBatchSize(findBatch))
	type count struct {
		TaskID string `bson:"_id"`
		N      int    `bson:"n"`
	}
	over, err := findAll[count](ctx, cur, err)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range over {
		if n >= limit {
			break
		}
		filter := bson.D{{Key: "task_id", Value: c.TaskID}, {Key: "state", Value: bson.D{{Key: "$in", Value: finalStates()}}}}
		del, err := s.deleteRuns(ctx, filter, bson.D{{Key: "slot", Value: -1}, {Key: "target", Value: -1}}, keep, limit-n)
		n += del
		if err != nil {
			return n, fmt.Errorf("task %s: %w", c.TaskID, err)
		}
	}
	return n, nil
}

// deleteRuns deletes the runs matching filter in sort order, skipping the
// first skip, at most limit, and returns how many went. filter must hold
// the state condition: it is applied again by the delete.
func (s *Store) deleteRuns(ctx context.Context, filter, sort bson.D, skip, limit int) (int, error) {
	cur, err := s.runs.Find(ctx, filter, findOpts().SetSort(sort).SetSkip(int64(skip)).SetLimit(int64(limit)).
		SetProjection(bson.D{{Key: "_id", Value: 1}}))
	type id struct {
		ID any `bson:"_id"`
	}
	docs, err := findAll[id](ctx, cur, err)
	if err != nil || len(docs) == 0 {
		return 0, err
	}
	n := 0
	for len(docs) > 0 {
		chunk := docs[:min(len(docs), s.bulkMax)]
		docs = docs[len(chunk):]
		ids := make(bson.A, len(chunk))
		for i, d := range chunk {
			ids[i] = d.ID
		}
		res, err := s.runs.DeleteMany(ctx, append(bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}, filter...))
		if err != nil {
			return n, err
		}
		n += int(res.DeletedCount)
	}
	return n, nil
}
