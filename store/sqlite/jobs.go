package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"

	"cronsheet/store"
	"cronsheet/store/internal/taskdoc"
	"cronsheet/task"
)

// Jobs (store.Jobs): a job is a time_task row of scenario task.JobScenario
// with no row, task.Job in its document; job_keys says which job holds a
// key, job_events keeps each job's transitions (schema.go). Every write is
// one transaction on the writer.

const (
	// qJobByKey finds the key's holder through job_keys' primary key, then
	// time_task's task_id index.
	qJobByKey = `SELECT ` + taskCols + ` FROM time_task
		WHERE task_id = (SELECT task_id FROM job_keys WHERE key = ?)`
	qKeyHolder    = `SELECT task_id FROM job_keys WHERE key = ?`
	qInsertJobKey = `INSERT INTO job_keys (key, task_id) VALUES (?, ?)`
	// qMoveJobKey hands a key over, only from the job that holds it.
	qMoveJobKey  = `UPDATE job_keys SET task_id = ? WHERE key = ? AND task_id = ?`
	qAddJobEvent = `INSERT INTO job_events (job_id, at, state, trigger_id, attempt, reason) VALUES (?, ?, ?, ?, ?, ?)`
	qJobEvents   = `SELECT job_id, at, state, trigger_id, attempt, reason FROM job_events
		WHERE job_id = ? ORDER BY id LIMIT ?`
	// qListJobs pages jobs newest first through ix_task_created
	// (scenario, created_at, task_id); the first page passes created_at
	// math.MaxInt64 (not prepared).
	qListJobs = `SELECT ` + taskCols + ` FROM time_task INDEXED BY ix_task_created
		WHERE scenario = ? AND (created_at < ? OR (created_at = ? AND task_id < ?))
		ORDER BY created_at DESC, task_id DESC LIMIT ?`
	// qRestoreJobKey gives a restored job its key back, unless another job
	// holds it (dump.go; not prepared).
	qRestoreJobKey = `INSERT INTO job_keys (key, task_id) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`
)

// CreateJob stores t, a job, as a new task with version 1, unclaimed and
// not done, created and updated now (set on t, with the anchor: a zero
// Anchor is now), and takes t.Job.Key for it when set, in one transaction.
// A taken task_id or a key another job holds is task.ErrConflict, saying
// which, and stores nothing. A t without TaskID or Job, of another
// scenario than task.JobScenario, or with a RowID, is task.ErrInvalid.
func (s *Store) CreateJob(ctx context.Context, t *task.Task) error {
	if err := checkJob(t); err != nil {
		return fmt.Errorf("create job: %w", err)
	}
	now := s.nowMS()
	err := s.inTx(ctx, func(tx *sql.Tx) error { return s.insertJobIn(ctx, tx, in(ctx, tx, s.st.insertTask), t, now) })
	if err != nil {
		return fmt.Errorf("create job %s: %w", t.TaskID, err)
	}
	setCreated(t, now)
	return nil
}

// JobByKey returns the job holding key, or task.ErrNotFound.
func (s *Store) JobByKey(ctx context.Context, key string) (*task.Task, error) {
	t, err := scanTask(s.st.jobByKey.QueryRowContext(ctx, key))
	if err != nil {
		return nil, fmt.Errorf("job by key %q: %w", key, translate(err))
	}
	return t, nil
}

// ReplaceJob moves key from job oldID to the new job t in one transaction:
// t is created as by CreateJob (t.Job.Key must be key, else
// task.ErrInvalid) and takes the key; oldID loses it (Job.Key ""), gets
// Job.ReplacedBy = t.TaskID and state closed, version+1, its claim
// released. A missing oldID is task.ErrNotFound; a key oldID does not hold
// (any more), or a taken t.TaskID, is task.ErrConflict; either way nothing
// changes.
func (s *Store) ReplaceJob(ctx context.Context, key, oldID string, t *task.Task) error {
	if err := checkJob(t); err != nil {
		return fmt.Errorf("replace job %s: %w", oldID, err)
	}
	if key == "" || t.Job.Key != key {
		return fmt.Errorf("replace job %s: %w", oldID,
			task.Invalid("key", "the new job must hold the key replaced, %q; it has %q", key, t.Job.Key))
	}
	now := s.nowMS()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var id int64
		old, err := scanTask(extraScan{in(ctx, tx, s.st.taskForState).QueryRowContext(ctx, oldID), []any{&id}})
		if err != nil {
			return translate(err)
		}
		var holder string
		err = in(ctx, tx, s.st.keyHolder).QueryRowContext(ctx, key).Scan(&holder)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("%w: key %q is not held by job %s (no job holds it)", task.ErrConflict, key, oldID)
		case err != nil:
			return err
		case holder != oldID:
			return fmt.Errorf("%w: key %q is not held by job %s any more: job %s holds it", task.ErrConflict, key, oldID, holder)
		}
		if err := s.insertJob(ctx, in(ctx, tx, s.st.insertTask), t, now); err != nil {
			return err
		}
		if n, err := execCount(ctx, in(ctx, tx, s.st.moveJobKey), t.TaskID, key, oldID); err != nil {
			return err
		} else if n != 1 {
			return fmt.Errorf("key %q: %d holders moved, want 1", key, n)
		}
		d := docOf(old, store.UnixMS(old.Anchor))
		if d.Job == nil {
			d.Job = &taskdoc.Job{}
		}
		d.Job.Key, d.Job.ReplacedBy, d.State = "", t.TaskID, task.StateClosed
		doc, err := d.marshal()
		if err != nil {
			return err
		}
		_, err = in(ctx, tx, s.st.setTaskState).ExecContext(ctx, doc, now, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("replace job %s by %s: %w", oldID, t.TaskID, err)
	}
	setCreated(t, now)
	return nil
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

// keyFree fails with task.ErrConflict, naming the holder, when a job holds
// key.
func (s *Store) keyFree(ctx context.Context, tx *sql.Tx, key string) error {
	var holder string
	err := in(ctx, tx, s.st.keyHolder).QueryRowContext(ctx, key).Scan(&holder)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("%w: key %q is held by job %s", task.ErrConflict, key, holder)
}

// insertJob inserts t as a new task (version 1, unclaimed, not done, not
// deleted, created and updated now); a taken task_id is task.ErrConflict
// saying so. It writes one statement, so a conflict leaves nothing of t
// and the transaction usable (SQLite rolls back only the failed
// statement): the task_id's unique index is the check, no read before it.
// ins is insertTask bound to the transaction.
func (s *Store) insertJob(ctx context.Context, ins *sql.Stmt, t *task.Task, now int64) error {
	anchor := store.UnixMS(t.Anchor)
	if anchor == 0 {
		anchor = now
	}
	d := docOf(t, anchor)
	doc, err := d.marshal()
	if err != nil {
		return err
	}
	enable := 0
	if t.IsEnable == 1 {
		enable = 1
	}
	_, err = ins.ExecContext(ctx, t.TaskID, t.Scenario, "", doc, enable,
		store.UnixMS(t.NextFire), store.UnixMS(t.LastFire), t.LastStatus, now, now, store.UnixMS(t.ArmAt))
	if err = translate(err); errors.Is(err, task.ErrConflict) {
		return fmt.Errorf("%w: task_id %s is taken", task.ErrConflict, t.TaskID)
	}
	return err
}

// setCreated sets on t what CreateJob stored beyond t's own fields.
func setCreated(t *task.Task, now int64) {
	if t.Anchor.IsZero() {
		t.Anchor = store.FromUnixMS(now)
	}
	if t.IsEnable != 1 {
		t.IsEnable = 0
	}
	t.IsClaimed, t.ClaimedBy, t.LeaseUntil, t.IsDone = 0, "", store.FromUnixMS(0), 0
	t.Version = 1
	t.CreatedAt, t.UpdatedAt = store.FromUnixMS(now), store.FromUnixMS(now)
}

// qAddJobEvents is qAddJobEvent for n events in one statement (6
// arguments each): their ids follow the VALUES order.
func qAddJobEvents(n int) string {
	return `INSERT INTO job_events (job_id, at, state, trigger_id, attempt, reason) VALUES ` +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?),", n), ",")
}

// AddJobEvents appends evs, in order, to their jobs' histories in one
// transaction, insertRows events a statement. An event without JobID, or
// more than store.MaxStatusBatch events, is task.ErrInvalid and stores
// nothing; none is a no-op. The jobs are not looked up.
func (s *Store) AddJobEvents(ctx context.Context, evs []store.JobEvent) error {
	if len(evs) > store.MaxStatusBatch {
		return fmt.Errorf("add job events: %w",
			task.Invalid("events", "at most %d per call, got %d", store.MaxStatusBatch, len(evs)))
	}
	for i, ev := range evs {
		if ev.JobID == "" {
			return fmt.Errorf("add job events: %w", task.Invalid("job_id", "required (event %d)", i))
		}
	}
	if len(evs) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		qctx := batchCtx(ctx)
		for lo := 0; lo < len(evs); lo += insertRows {
			if err := ctx.Err(); err != nil {
				return err
			}
			chunk := evs[lo:min(lo+insertRows, len(evs))]
			args := make([]any, 0, 6*len(chunk))
			for _, ev := range chunk {
				args = append(args, ev.JobID, store.UnixMS(ev.At), string(ev.State), ev.TriggerID, ev.Attempt, ev.Reason)
			}
			var err error
			if len(chunk) == insertRows {
				_, err = in(qctx, tx, s.st.addJobEvents).ExecContext(qctx, args...)
			} else {
				_, err = tx.ExecContext(qctx, qAddJobEvents(len(chunk)), args...)
			}
			if err != nil {
				return fmt.Errorf("events of jobs %s…: %w", chunk[0].JobID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add %d job events: %w", len(evs), err)
	}
	return nil
}

// JobEvents returns a job's transitions in the order they were added, at
// most limit; a job without any (or unknown) has none. A limit that is not
// positive, or above store.MaxJobEvents, is task.ErrInvalid.
func (s *Store) JobEvents(ctx context.Context, jobID string, limit int) ([]store.JobEvent, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("job events of %s: %w", jobID, err)
	}
	if limit > store.MaxJobEvents {
		return nil, fmt.Errorf("job events of %s: %w", jobID,
			task.Invalid("limit", "at most %d, got %d", store.MaxJobEvents, limit))
	}
	rs, err := s.st.jobEvents.QueryContext(ctx, jobID, limit)
	if err != nil {
		return nil, fmt.Errorf("job events of %s: %w", jobID, err)
	}
	defer rs.Close()
	var out []store.JobEvent
	for rs.Next() {
		var (
			ev store.JobEvent
			at int64
		)
		if err := rs.Scan(&ev.JobID, &at, &ev.State, &ev.TriggerID, &ev.Attempt, &ev.Reason); err != nil {
			return nil, fmt.Errorf("job events of %s: %w", jobID, err)
		}
		ev.At = store.FromUnixMS(at)
		out = append(out, ev)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("job events of %s: %w", jobID, err)
	}
	return out, nil
}

// CreateJobs stores each of ts as by CreateJob, all in one transaction: a
// job that is invalid or conflicts is reported in errs and leaves nothing
// (a keyed job, two statements, is rolled back to its savepoint; a job
// without a key is one statement), the others are committed together,
// each with its event evs[i] when evs is given. Any other failure stores
// none of them.
func (s *Store) CreateJobs(ctx context.Context, ts []*task.Task, evs []store.JobEvent) ([]error, error) {
	if err := store.CheckCreateJobs(ts, evs); err != nil {
		return nil, fmt.Errorf("create jobs: %w", err)
	}
	errs := make([]error, len(ts))
	now := s.nowMS()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		qctx := batchCtx(ctx)
		ins := in(qctx, tx, s.st.insertTask)
		var add *sql.Stmt // bound at the first event
		for i, t := range ts {
			if err := checkJob(t); err != nil {
				errs[i] = fmt.Errorf("create job: %w", err)
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			var err error
			if t.Job.Key == "" {
				err = s.insertJob(qctx, ins, t, now)
			} else {
				err = s.insertKeyedJob(qctx, tx, ins, t, now)
			}
			switch {
			case errors.Is(err, task.ErrConflict):
				errs[i] = fmt.Errorf("create job %s: %w", t.TaskID, err)
				continue
			case err != nil:
				return fmt.Errorf("create job %s: %w", t.TaskID, err)
			}
			if evs == nil {
				continue
			}
			if add == nil {
				add = in(qctx, tx, s.st.addJobEvent)
			}
			ev := evs[i]
			if _, err := add.ExecContext(qctx, t.TaskID, store.UnixMS(ev.At), string(ev.State), ev.TriggerID, ev.Attempt, ev.Reason); err != nil {
				return fmt.Errorf("event of job %s: %w", t.TaskID, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create jobs: %w", err)
	}
	for i, t := range ts {
		if errs[i] == nil {
			setCreated(t, now)
		}
	}
	return errs, nil
}

// insertKeyedJob inserts the keyed job t as insertJobIn does (ins is
// insertTask bound to tx), inside a
// savepoint: a conflict on the key leaves nothing of t.
func (s *Store) insertKeyedJob(ctx context.Context, tx *sql.Tx, ins *sql.Stmt, t *task.Task, now int64) error {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT job"); err != nil {
		return err
	}
	err := s.insertJobIn(ctx, tx, ins, t, now)
	if err != nil {
		if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO job"); rerr != nil {
			return rerr
		}
	}
	if _, rerr := tx.ExecContext(ctx, "RELEASE job"); rerr != nil {
		return rerr
	}
	return err
}

// insertJobIn inserts job t and takes its key, inside tx (ins is
// insertTask bound to tx).
func (s *Store) insertJobIn(ctx context.Context, tx *sql.Tx, ins *sql.Stmt, t *task.Task, now int64) error {
	if t.Job.Key != "" {
		if err := s.keyFree(ctx, tx, t.Job.Key); err != nil {
			return err
		}
	}
	if err := s.insertJob(ctx, ins, t, now); err != nil {
		return err
	}
	if t.Job.Key == "" {
		return nil
	}
	_, err := in(ctx, tx, s.st.insertJobKey).ExecContext(ctx, t.Job.Key, t.TaskID)
	return translate(err)
}

// ListJobs returns up to p.Limit jobs, newest first by (created_at,
// task_id), after p.After in that order.
func (s *Store) ListJobs(ctx context.Context, p store.ListJobsParams) ([]*task.Task, error) {
	if err := store.CheckListJobs(p); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	at, id := int64(math.MaxInt64), ""
	if p.After != (store.JobCursor{}) {
		at, id = store.UnixMS(p.After.CreatedAt), p.After.TaskID
	}
	rs, err := s.r.QueryContext(ctx, qListJobs, task.JobScenario, at, at, id, p.Limit)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rs.Close()
	var out []*task.Task
	for rs.Next() {
		t, err := scanTask(rs)
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		out = append(out, t)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return out, nil
}
