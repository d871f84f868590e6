package mongo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"cronsheet/store"
	"cronsheet/store/internal/taskdoc"
	"cronsheet/task"
)

// Jobs (store.Jobs). A job is a time_task document like any other
// (scenario task.JobScenario, row_id "", task.Job under "job"), so claims,
// fires, feedback and states need nothing new: the status writes mirror a
// task's feedback onto its row only when it has one (row_id not ""),
// DeleteRow and ApplySync reach tasks through their rows, and a job is
// never deleted=1, so PurgeDeleted leaves it.
//
// Three collections serve the jobs API:
//
//   - job_keys {_id: key, task_id, at}: which job holds a key. The unique
//     _id makes a key held by one job at a time, also on FerretDB v1, where
//     single-document updates are not atomic under concurrency but unique
//     indexes hold. A job's own Job.Key says what it was given; job_keys
//     decides, and JobByKey reads it.
//   - job_moves {_id: replaced job's id, key, to, at}: the record of a
//     ReplaceJob. Its unique _id lets a job be replaced once: of callers
//     replacing the same job at once exactly one inserts it (a conditional
//     update of job_keys alone would not decide that on FerretDB v1). It is
//     kept, and lets whoever next reads the key finish a replacement that a
//     crash interrupted.
//   - job_events {job_id, at, state, …}: each job's transitions.
//
// Without transactions, CreateJob and ReplaceJob first insert a claim
// (the key; the move) that a unique _id arbitrates, then write the job,
// then what follows from it. Each says below what a crash between two
// steps leaves. The "at" of a claim is the clock of the node that took it:
// a claim whose job was never stored is abandoned once claimGrace has
// passed (well above a call's timeout, so no call can still be about to
// store its job; nodes' clocks are assumed to agree within a minute).

// jobKeyDoc is a document of job_keys: key is held by job TaskID since At.
type jobKeyDoc struct {
	Key    string `bson:"_id"`
	TaskID string `bson:"task_id"`
	At     int64  `bson:"at"`
}

// jobMoveDoc is a document of job_moves: job OldID is replaced by job To,
// which takes Key, since At.
type jobMoveDoc struct {
	OldID string `bson:"_id"`
	Key   string `bson:"key"`
	To    string `bson:"to"`
	At    int64  `bson:"at"`
}

// jobEventDoc is a document of job_events. _id, made by the driver in
// insertion order, orders the events of one millisecond.
type jobEventDoc struct {
	ID        bson.ObjectID `bson:"_id"`
	JobID     string        `bson:"job_id"`
	At        int64         `bson:"at"`
	State     task.JobState `bson:"state"`
	TriggerID string        `bson:"trigger_id,omitempty"`
	Attempt   int           `bson:"attempt,omitempty"`
	Reason    string        `bson:"reason,omitempty"`
}

func idKey(id string) bson.D { return bson.D{{Key: "_id", Value: id}} }

// claimGrace is how long, in milliseconds, a claim in job_keys or
// job_moves whose job does not exist counts as still being worked on.
func (s *Store) claimGrace() int64 { return (2*s.timeout + time.Minute).Milliseconds() }

// afterwards returns a context for undoing a step after ctx failed (it may
// have expired).
func (s *Store) afterwards(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
}

// CreateJob stores t, a job, as a new task with version 1, unclaimed and
// not done, created and updated now (set on t, with the anchor: a zero
// Anchor is now), holding t.Job.Key when set. A taken task_id or a key
// another job holds is task.ErrConflict, saying which, and stores nothing.
// A t without TaskID or Job, of another scenario than task.JobScenario, or
// with a RowID, is task.ErrInvalid.
//
// Order: (1) the task_id is checked free; (2) the key is taken: inserted
// into job_keys for t, the unique _id deciding between callers; (3) the
// task is inserted; when that fails, the key is given back. A crash
// between (2) and (3) leaves the key held by a job that does not exist:
// JobByKey finds none, and after claimGrace the next CreateJob with the key
// takes it over.
func (s *Store) CreateJob(ctx context.Context, t *task.Task) error {
	if err := checkJob(t); err != nil {
		return fmt.Errorf("create job: %w", err)
	}
	now := s.nowMS()
	ctx, cancel := s.call(ctx)
	defer cancel()
	if err := s.createJob(ctx, t, now); err != nil {
		return fmt.Errorf("create job %s: %w", t.TaskID, err)
	}
	setCreated(t, now)
	return nil
}

func (s *Store) createJob(ctx context.Context, t *task.Task, now int64) error {
	if err := s.taskIDFree(ctx, t.TaskID); err != nil {
		return err
	}
	key := t.Job.Key
	if key != "" {
		if err := s.takeKey(ctx, key, t.TaskID, now); err != nil {
			return err
		}
	}
	err := s.insertJob(ctx, t, now)
	if err != nil && key != "" {
		err = errors.Join(err, s.undoClaim(ctx, s.jobKeys, bson.D{{Key: "_id", Value: key}, {Key: "task_id", Value: t.TaskID}},
			t.TaskID, err))
	}
	return err
}

// undoClaim deletes the claim filter selects after the insert of job id
// failed with err: at once when the id was taken (the job is not ours),
// else only when the job is not there (a failed call may still have stored
// it; then the claim stays, as after a crash).
func (s *Store) undoClaim(ctx context.Context, c *collection, filter bson.D, id string, err error) error {
	ctx, cancel := s.afterwards(ctx)
	defer cancel()
	if !errors.Is(err, task.ErrConflict) {
		if err := s.taskExists(ctx, id); !errors.Is(err, task.ErrNotFound) {
			return err
		}
	}
	_, err = c.DeleteOne(ctx, filter)
	return err
}

// checkJob checks what CreateJob and ReplaceJob need of t.
func checkJob(t *task.Task) error {
	switch {
	case t == nil || t.Job == nil:
		return task.Invalid("job", "required")
	case t.TaskID == "":
		return task.Invalid("task_id", "required")
	case t.Scenario != task.JobScenario:
		return task.Invalid("scenario", "a job's is %q, got %q", task.JobScenario, t.Scenario)
	case t.RowID != "":
		return task.Invalid("row_id", "a job has no row, got %q", t.RowID)
	}
	return nil
}

// taskIDFree fails with task.ErrConflict when task id exists.
func (s *Store) taskIDFree(ctx context.Context, id string) error {
	err := s.taskExists(ctx, id)
	switch {
	case err == nil:
		return fmt.Errorf("%w: task_id %s is taken", task.ErrConflict, id)
	case errors.Is(err, task.ErrNotFound):
		return nil
	}
	return err
}

// insertJob inserts t as a new task: version 1, unclaimed, not done,
// created and updated now, a zero anchor now. A taken task_id is
// task.ErrConflict saying so.
func (s *Store) insertJob(ctx context.Context, t *task.Task, now int64) error {
	_, err := s.tasks.InsertOne(ctx, s.jobTaskDoc(t, now))
	if isDuplicate(err) {
		return fmt.Errorf("%w: task_id %s is taken: %w", task.ErrConflict, t.TaskID, err)
	}
	return err
}

// jobTaskDoc is the document of t as a new job: version 1, unclaimed, not
// done, created and updated now, a zero anchor now.
func (s *Store) jobTaskDoc(t *task.Task, now int64) taskDoc {
	anchor := store.UnixMS(t.Anchor)
	if anchor == 0 {
		anchor = now
	}
	enable := 0
	if t.IsEnable == 1 {
		enable = 1
	}
	return taskDoc{
		TaskID: t.TaskID, Scenario: t.Scenario, Content: contentOf(t, anchor), Job: taskdoc.JobOf(t.Job),
		IsEnable: enable, NextFire: store.UnixMS(t.NextFire), LastFire: store.UnixMS(t.LastFire),
		LastStatus: t.LastStatus, Version: 1, CreatedAt: now, UpdatedAt: now, ArmAt: store.UnixMS(t.ArmAt),
	}
}

// setCreated sets on t what CreateJob stored beyond t's own fields.
func setCreated(t *task.Task, now int64) {
	if t.Anchor.IsZero() {
		t.Anchor = store.FromUnixMS(now)
	}
	if t.IsEnable != 1 {
		t.IsEnable = 0
	}
	t.IsClaimed, t.ClaimedBy, t.LeaseUntil, t.IsDone = 0, "", time.Time{}, 0
	t.Version = 1
	t.CreatedAt, t.UpdatedAt = store.FromUnixMS(now), store.FromUnixMS(now)
}

// takeKey inserts key into job_keys for job taskID. A key held by a job
// that exists and holds it is task.ErrConflict; one whose holder is not
// there (or holds it no more) after claimGrace is taken over.
func (s *Store) takeKey(ctx context.Context, key, taskID string, now int64) error {
	for range 2 {
		_, err := s.jobKeys.InsertOne(ctx, jobKeyDoc{Key: key, TaskID: taskID, At: now})
		if err == nil || !isDuplicate(err) {
			return err
		}
		h, err := s.holder(ctx, key)
		if err != nil {
			return err
		}
		if h == nil {
			continue // given back in the meantime
		}
		_, err = s.holdingJob(ctx, h)
		switch {
		case err == nil:
			return fmt.Errorf("%w: key %q is held by job %s", task.ErrConflict, key, h.TaskID)
		case !errors.Is(err, task.ErrNotFound):
			return err
		case now-h.At < s.claimGrace():
			return fmt.Errorf("%w: key %q is being taken by job %s", task.ErrConflict, key, h.TaskID)
		}
		// Taken by a call that never stored its job: free it.
		_, err = s.jobKeys.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}, {Key: "task_id", Value: h.TaskID}, {Key: "at", Value: h.At}})
		if err != nil {
			return err
		}
	}
	return fmt.Errorf("%w: key %q is being taken by another job", task.ErrConflict, key)
}

// JobByKey returns the job holding key, or task.ErrNotFound (also for a
// key taken for a job that was never stored). It reads job_keys, the
// holder's move in job_moves (none, normally) and the job: three _id or
// task_id lookups. A move that a crash interrupted is first finished (see
// ReplaceJob), so it returns the job the key went to.
func (s *Store) JobByKey(ctx context.Context, key string) (*task.Task, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	t, err := s.jobByKey(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("job by key %q: %w", key, err)
	}
	return t, nil
}

func (s *Store) jobByKey(ctx context.Context, key string) (*task.Task, error) {
	h, err := s.holder(ctx, key)
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("no job holds it: %w", task.ErrNotFound)
	}
	return s.holdingJob(ctx, h)
}

// holdingJob returns the job h names when it exists and holds h's key;
// else task.ErrNotFound (a claim whose job was not stored).
func (s *Store) holdingJob(ctx context.Context, h *jobKeyDoc) (*task.Task, error) {
	var d taskDoc
	if err := s.tasks.FindOne(ctx, taskKey(h.TaskID)).Decode(&d); err != nil {
		return nil, fmt.Errorf("job %s: %w", h.TaskID, translate(err))
	}
	if d.Job == nil || d.Job.Key != h.Key {
		return nil, fmt.Errorf("job %s does not hold it: %w", h.TaskID, task.ErrNotFound)
	}
	return d.task(), nil
}

// holder returns key's document in job_keys (nil when none), after
// finishing a replacement of its holder that a crash interrupted.
func (s *Store) holder(ctx context.Context, key string) (*jobKeyDoc, error) {
	var k jobKeyDoc
	err := s.jobKeys.FindOne(ctx, idKey(key)).Decode(&k)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var mv jobMoveDoc
	err = s.jobMoves.FindOne(ctx, idKey(k.TaskID)).Decode(&mv)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments) || (err == nil && mv.Key != key):
		return &k, nil
	case err != nil:
		return nil, err
	}
	st, err := s.settleMove(ctx, &mv)
	if err != nil {
		return nil, fmt.Errorf("finish the replacement of job %s by %s: %w", mv.OldID, mv.To, err)
	}
	if st == moveDone {
		k.TaskID = mv.To
	}
	return &k, nil
}

// ReplaceJob moves key from job oldID to the new job t: t is created as by
// CreateJob (t.Job.Key must be key, else task.ErrInvalid) and takes the
// key; oldID loses it (Job.Key ""), gets Job.ReplacedBy = t.TaskID, state
// closed, version+1 and its claim released. A missing oldID is
// task.ErrNotFound; a key oldID does not hold (any more), a job another
// caller is replacing, or a taken t.TaskID is task.ErrConflict, and then
// nothing is stored.
//
// Order:
//
//  1. checks: oldID exists, job_keys gives key to oldID (after finishing
//     an interrupted replacement, as JobByKey does), t.TaskID is free;
//  2. the move {_id: oldID, key, to: t.TaskID} is inserted into
//     job_moves: its unique _id lets one caller replace oldID, the others
//     get task.ErrConflict having stored nothing;
//  3. the new job is inserted (when that fails, the move is deleted);
//  4. oldID is closed: Job.Key "", Job.ReplacedBy, closed, version+1,
//     unclaimed;
//  5. job_keys hands key from oldID to t.TaskID.
//
// job_keys names oldID until step 5 and t.TaskID from then on, so at every
// step the key is with exactly one of the two jobs, and it moves only once
// the new job exists. A crash after step 2 or 3 leaves the move pending:
// whoever next reads the key (JobByKey, CreateJob or ReplaceJob with it)
// finishes steps 4 and 5 from the move, or, when its new job was never
// stored and claimGrace has passed, deletes it (oldID keeps the key and
// can be replaced again). Until then, after step 3, both jobs are armed.
func (s *Store) ReplaceJob(ctx context.Context, key, oldID string, t *task.Task) error {
	if err := checkJob(t); err != nil {
		return fmt.Errorf("replace job %s: %w", oldID, err)
	}
	if key == "" || t.Job.Key != key {
		return fmt.Errorf("replace job %s: %w", oldID,
			task.Invalid("key", "the new job must hold the key replaced, %q; it has %q", key, t.Job.Key))
	}
	now := s.nowMS()
	ctx, cancel := s.call(ctx)
	defer cancel()
	if err := s.replaceJob(ctx, key, oldID, t, now); err != nil {
		return fmt.Errorf("replace job %s by %s: %w", oldID, t.TaskID, err)
	}
	setCreated(t, now)
	return nil
}

func (s *Store) replaceJob(ctx context.Context, key, oldID string, t *task.Task, now int64) error {
	if err := s.taskExists(ctx, oldID); err != nil {
		return fmt.Errorf("job %s: %w", oldID, err)
	}
	h, err := s.holder(ctx, key)
	switch {
	case err != nil:
		return err
	case h == nil:
		return fmt.Errorf("%w: key %q is not held by job %s (no job holds it)", task.ErrConflict, key, oldID)
	case h.TaskID != oldID:
		return fmt.Errorf("%w: key %q is not held by job %s any more: job %s holds it", task.ErrConflict, key, oldID, h.TaskID)
	}
	if err := s.taskIDFree(ctx, t.TaskID); err != nil {
		return err
	}
	mv := &jobMoveDoc{OldID: oldID, Key: key, To: t.TaskID, At: now}
	if err := s.startMove(ctx, mv); err != nil {
		return err
	}
	if err := s.insertJob(ctx, t, now); err != nil {
		return errors.Join(err, s.undoClaim(ctx, s.jobMoves,
			bson.D{{Key: "_id", Value: oldID}, {Key: "to", Value: t.TaskID}}, t.TaskID, err))
	}
	return s.completeMove(ctx, mv, now)
}

// startMove inserts mv into job_moves. Another move of the same job is
// task.ErrConflict, unless it was abandoned: then it is deleted and mv
// inserted.
func (s *Store) startMove(ctx context.Context, mv *jobMoveDoc) error {
	for range 2 {
		_, err := s.jobMoves.InsertOne(ctx, mv)
		if err == nil || !isDuplicate(err) {
			return err
		}
		var other jobMoveDoc
		err = s.jobMoves.FindOne(ctx, idKey(mv.OldID)).Decode(&other)
		if errors.Is(err, mongo.ErrNoDocuments) {
			continue
		}
		if err != nil {
			return err
		}
		st, err := s.settleMove(ctx, &other)
		if err != nil {
			return err
		}
		if st != moveDropped {
			return fmt.Errorf("%w: job %s is replaced by job %s", task.ErrConflict, mv.OldID, other.To)
		}
	}
	return fmt.Errorf("%w: job %s is being replaced by another job", task.ErrConflict, mv.OldID)
}

// moveState is what settleMove found of a move.
type moveState int

const (
	movePending moveState = iota // its new job is not stored (yet): its ReplaceJob is at work
	moveDone                     // finished: the key is with its new job, the old one is closed
	moveDropped                  // abandoned before its new job was stored, and deleted
)

// settleMove finishes mv (steps 4 and 5 of ReplaceJob) when its new job
// exists, deletes it when its new job was not stored within claimGrace,
// else leaves it to the ReplaceJob at work.
func (s *Store) settleMove(ctx context.Context, mv *jobMoveDoc) (moveState, error) {
	now := s.nowMS()
	err := s.taskExists(ctx, mv.To)
	switch {
	case errors.Is(err, task.ErrNotFound):
		if now-mv.At < s.claimGrace() {
			return movePending, nil
		}
		_, err := s.jobMoves.DeleteOne(ctx, bson.D{{Key: "_id", Value: mv.OldID}, {Key: "to", Value: mv.To}, {Key: "at", Value: mv.At}})
		if err != nil {
			return movePending, err
		}
		return moveDropped, nil
	case err != nil:
		return movePending, err
	}
	if err := s.completeMove(ctx, mv, now); err != nil {
		return movePending, err
	}
	return moveDone, nil
}

// completeMove closes mv's old job, then hands the key to its new job (if
// the old one still holds it). Both steps may run again, also at once (a
// replacement finished by several readers): they write the same values.
func (s *Store) completeMove(ctx context.Context, mv *jobMoveDoc, now int64) error {
	if err := s.closeReplaced(ctx, mv.OldID, mv.To, now); err != nil {
		return fmt.Errorf("close job %s: %w", mv.OldID, err)
	}
	_, err := s.jobKeys.UpdateOne(ctx, bson.D{{Key: "_id", Value: mv.Key}, {Key: "task_id", Value: mv.OldID}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "task_id", Value: mv.To}, {Key: "at", Value: now}}}})
	if err != nil {
		return fmt.Errorf("hand key %q to job %s: %w", mv.Key, mv.To, err)
	}
	return nil
}

// closeReplaced closes job oldID, replaced by job to: Job.Key "",
// Job.ReplacedBy to, state closed, version+1 (compared and set), claim
// released. A job closed so already, or gone, is left alone.
func (s *Store) closeReplaced(ctx context.Context, oldID, to string, now int64) error {
	for range maxVersionTries {
		var old taskDoc
		err := s.tasks.FindOne(ctx, taskKey(oldID)).Decode(&old)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil
		}
		if err != nil {
			return err
		}
		if old.Job != nil && old.Job.ReplacedBy == to && old.Job.Key == "" && old.Content.State == task.StateClosed {
			return nil
		}
		set := bson.D{{Key: "job.key", Value: ""}, {Key: "job.replaced_by", Value: to},
			{Key: "state", Value: task.StateClosed}, {Key: "version", Value: old.Version + 1}, {Key: "updated_at", Value: now},
			{Key: "arm_at", Value: int64(0)},
			{Key: "is_claimed", Value: 0}, {Key: "claimed_by", Value: ""}, {Key: "lease_until", Value: 0}}
		res, err := s.tasks.UpdateOne(ctx, bson.D{{Key: "task_id", Value: oldID}, {Key: "version", Value: old.Version}},
			bson.D{{Key: "$set", Value: set}})
		if err != nil {
			return err
		}
		if res.MatchedCount > 0 {
			return nil
		}
		// Changed since it was read: read it again.
	}
	return fmt.Errorf("%w: the job changed %d times while it was closed", task.ErrConflict, maxVersionTries)
}

// AddJobEvents appends evs, in order, to their jobs' histories with one
// ordered insertMany. An event without JobID, or more than
// store.MaxStatusBatch events, is task.ErrInvalid and stores nothing; none
// is a no-op. The jobs are not looked up. Should the insert fail midway,
// the events before the failure stay.
func (s *Store) AddJobEvents(ctx context.Context, evs []store.JobEvent) error {
	if len(evs) > store.MaxStatusBatch {
		return fmt.Errorf("add job events: %w",
			task.Invalid("events", "at most %d per call, got %d", store.MaxStatusBatch, len(evs)))
	}
	docs := make([]any, len(evs))
	for i, ev := range evs {
		if ev.JobID == "" {
			return fmt.Errorf("add job events: %w", task.Invalid("job_id", "required (event %d)", i))
		}
		docs[i] = jobEventDoc{ID: bson.NewObjectID(), JobID: ev.JobID, At: store.UnixMS(ev.At), State: ev.State,
			TriggerID: ev.TriggerID, Attempt: ev.Attempt, Reason: ev.Reason}
	}
	if len(docs) == 0 {
		return nil
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	if _, err := s.jobEvents.InsertMany(ctx, docs); err != nil {
		return fmt.Errorf("add %d job events: %w", len(evs), err)
	}
	return nil
}

// JobEvents returns a job's transitions oldest first (by at, then in the
// order they were added), at most limit; a job without any (or unknown)
// has none. A limit that is not positive, or above store.MaxJobEvents, is
// task.ErrInvalid.
func (s *Store) JobEvents(ctx context.Context, jobID string, limit int) ([]store.JobEvent, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("job events of %s: %w", jobID, err)
	}
	if limit > store.MaxJobEvents {
		return nil, fmt.Errorf("job events of %s: %w", jobID,
			task.Invalid("limit", "at most %d, got %d", store.MaxJobEvents, limit))
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.jobEvents.Find(ctx, bson.D{{Key: "job_id", Value: jobID}},
		findOpts().SetSort(bson.D{{Key: "at", Value: 1}, {Key: "_id", Value: 1}}).SetLimit(int64(limit)))
	docs, err := findAll[jobEventDoc](ctx, cur, err)
	if err != nil {
		return nil, fmt.Errorf("job events of %s: %w", jobID, err)
	}
	var out []store.JobEvent
	for _, d := range docs {
		out = append(out, store.JobEvent{JobID: d.JobID, At: store.FromUnixMS(d.At), State: d.State,
			TriggerID: d.TriggerID, Attempt: d.Attempt, Reason: d.Reason})
	}
	return out, nil
}

// ListJobs returns up to p.Limit jobs, newest first by (created_at,
// task_id), after p.After in that order, through ix_task_created.
func (s *Store) ListJobs(ctx context.Context, p store.ListJobsParams) ([]*task.Task, error) {
	if err := store.CheckListJobs(p); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	filter := bson.D{{Key: "scenario", Value: task.JobScenario}}
	if p.After != (store.JobCursor{}) {
		at := store.UnixMS(p.After.CreatedAt)
		filter = append(filter, bson.E{Key: "$or", Value: bson.A{
			bson.D{{Key: "created_at", Value: bson.D{{Key: "$lt", Value: at}}}},
			bson.D{{Key: "created_at", Value: at}, {Key: "task_id", Value: bson.D{{Key: "$lt", Value: p.After.TaskID}}}},
		}})
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.tasks.Find(ctx, filter, findOpts().
		SetSort(bson.D{{Key: "scenario", Value: -1}, {Key: "created_at", Value: -1}, {Key: "task_id", Value: -1}}).
		SetLimit(int64(p.Limit)))
	docs, err := findAll[taskDoc](ctx, cur, err)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	out := make([]*task.Task, 0, len(docs))
	for i := range docs {
		out = append(out, docs[i].task())
	}
	return out, nil
}
