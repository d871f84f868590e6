package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// What the central-timer model needs beyond the memos loop (store.Control):
// task states, accepted runs and their feedback, run queries and cleanup.
// Targets are in targets.go, the indexes in schema.go. Every write is one
// transaction on the writer, so each method is all or nothing.

const (
	// qTaskForState reads a task and its rowid inside SetTaskState's
	// transaction.
	qTaskForState = `SELECT ` + taskCols + `, id FROM time_task WHERE task_id = ?`
	// qSetTaskState stores a new state: version+1 and the claim released,
	// so the owner disarms the task and the publish patrol re-arms it.
	qSetTaskState = `UPDATE time_task SET doc = ?, is_claimed = 0, claimed_by = '', lease_until = 0,
			version = version + 1, arm_at = 0, updated_at = ?
		WHERE id = ? RETURNING ` + taskCols

	// qAcceptRun takes a run from running to accepted, and only from
	// running: a run that got its final report first stays as it is. A
	// run already accepted at the same fence with the same deadline is
	// this same write again (a retry after an outcome-unknown error): it
	// matches too, so the retry writes the task's status and answers true.
	qAcceptRun = `UPDATE runs SET state = 'accepted', deadline = ?1, attempt = ?2, output = ?3, error = ?4
		WHERE trigger_id = ?5 AND fence = ?6 AND (state = 'running' OR (state = 'accepted' AND deadline = ?1))`
	qRunExists = `SELECT 1 FROM runs WHERE trigger_id = ?`

	qRunForFeedback = `SELECT task_id, state, feedback FROM runs WHERE trigger_id = ?`
	qAddProgress    = `UPDATE runs SET feedback = ? WHERE trigger_id = ? RETURNING ` + runCols
	// qAddFinal ends a run with its final report; ?5 (the report's output)
	// replaces the output only when given.
	// The fence moves on, so that a deliverer still holding the run is
	// refused its later writes.
	qAddFinal = `UPDATE runs SET feedback = ?1, state = ?2, finished_at = ?3, next_attempt = 0, deadline = 0,
			fence = fence + 1, error = ?4, output = CASE WHEN ?5 <> '' THEN ?5 ELSE output END
		WHERE trigger_id = ?6 RETURNING ` + runCols

	// qAnyDueAccepted runs on a reader, so that the common case (no
	// deadline has passed) never takes the write lock.
	// Both name ix_runs_accepted, so the plan cannot drift to another index.
	qAnyDueAccepted = `SELECT 1 FROM runs INDEXED BY ix_runs_accepted
		WHERE state = 'accepted' AND deadline < ? LIMIT 1`
	// qDueAccepted runs on the writer, inside ExpireAccepted's transaction.
	qDueAccepted = `SELECT trigger_id, deadline FROM runs INDEXED BY ix_runs_accepted
		WHERE state = 'accepted' AND deadline < ? ORDER BY deadline LIMIT ?`
	qTimeoutRun = `UPDATE runs SET state = 'timeout', finished_at = ?, error = ?, fence = fence + 1
		WHERE trigger_id = ? AND state = 'accepted' RETURNING ` + runCols

	// qCleanupAge deletes finished runs that finished before ?1, the
	// earliest first, at most ?2.
	qCleanupAge = `DELETE FROM runs WHERE id IN (SELECT id FROM runs INDEXED BY ix_runs_final_age
		WHERE ` + finalWhere + ` AND finished_at < ?1 ORDER BY finished_at LIMIT ?2)`
	// qCleanupKeep deletes, at most ?2, finished runs beyond each task's
	// newest ?1 (by slot, ties by target): ix_runs_final_slot holds them in
	// exactly the window's order.
	qCleanupKeep = `DELETE FROM runs WHERE id IN (SELECT id FROM (
			SELECT id, row_number() OVER (PARTITION BY task_id ORDER BY slot DESC, target DESC) AS n
			FROM runs INDEXED BY ix_runs_final_slot WHERE ` + finalWhere + `)
		WHERE n > ?1 LIMIT ?2)`
)

// Filters of QueryRuns, as bits of the index into stmts.queryRuns.
const (
	byTask = 1 << iota
	byTarget
	byState
	runQueryVariants = 1 << iota
)

// qQueryRuns returns the QueryRuns statement for the filters in variant
// (byTask, byTarget, byState): the filters' equalities in that order
// (?1, ?2, … for those set), then the cursor, then the limit. It is a
// history union (historyUnion) over the index schema.go gives that
// combination.
func qQueryRuns(variant int) string {
	index := "ix_runs_hist"
	switch {
	case variant&byTask != 0:
		index = "ix_runs_hist_task"
	case variant&byTarget != 0:
		index = "ix_runs_hist_target"
	}
	var where []string
	n := 0
	for _, f := range []struct {
		bit  int
		cond string
	}{{byTask, "task_id = ?%d"}, {byTarget, "target = ?%d AND target <> ''"}, {byState, "state = ?%d"}} {
		if variant&f.bit != 0 {
			n++
			where = append(where, fmt.Sprintf(f.cond, n))
		}
	}
	where = append(where, fmt.Sprintf("(fired_at, trigger_id) < (?%d, ?%d)", n+1, n+2))
	return historyUnion(runCols, index, strings.Join(where, " AND "), fmt.Sprintf("?%d", n+3))
}

// SetTaskState sets a task's state in one transaction. A change bumps the
// version, releases the claim and, when the state becomes running, sets
// the anchor to p.Anchor (p.Now when zero, else the store clock); the same
// state again changes nothing. updated_at is p.Now (else the store clock).
// A missing task is task.ErrNotFound, an unknown state task.ErrInvalid. It
// returns the task as stored.
func (s *Store) SetTaskState(ctx context.Context, p store.TaskStateParams) (*task.Task, error) {
	if !p.State.Valid() {
		return nil, fmt.Errorf("set state of task %s: %w", p.TaskID,
			task.Invalid("state", "must be running, stopped or closed; got %q", p.State))
	}
	now := cmp.Or(store.UnixMS(p.Now), s.nowMS())
	anchor := cmp.Or(store.UnixMS(p.Anchor), now)
	var out *task.Task
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var id int64
		t, err := scanTask(extraScan{in(ctx, tx, s.st.taskForState).QueryRowContext(ctx, p.TaskID), []any{&id}})
		if err != nil {
			return translate(err)
		}
		if t.State == p.State {
			out = t
			return nil
		}
		d := docOf(t, store.UnixMS(t.Anchor))
		d.State = p.State
		if p.State == task.StateRunning {
			d.Anchor = anchor
		}
		doc, err := d.marshal()
		if err != nil {
			return err
		}
		out, err = scanTask(in(ctx, tx, s.st.setTaskState).QueryRowContext(ctx, doc, now, id))
		return translate(err)
	})
	if err != nil {
		return nil, fmt.Errorf("set state of task %s to %s: %w", p.TaskID, p.State, err)
	}
	return out, nil
}

// AcceptRun stores r as accepted (its Deadline, Attempt, Output and Error)
// and applies status as SetTaskStatus does, in one transaction, only while
// the stored run is running; otherwise it changes nothing and reports
// false. A missing run, or a missing task, is task.ErrNotFound and stores
// nothing; an empty TriggerID is task.ErrInvalid.
func (s *Store) AcceptRun(ctx context.Context, r *task.Run, status store.TaskStatusParams) (bool, error) {
	if r == nil || r.TriggerID == "" {
		return false, fmt.Errorf("accept run: %w", task.Invalid("trigger_id", "required"))
	}
	var accepted bool
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		n, err := execCount(ctx, in(ctx, tx, s.st.acceptRun), store.UnixMS(r.Deadline), r.Attempt,
			task.Truncate(r.Output, task.MaxOutput), task.Truncate(r.Error, task.MaxOutput), r.TriggerID, r.Fence)
		if err != nil {
			return err
		}
		if n == 0 { // missing, or no longer running
			var one int
			return translate(in(ctx, tx, s.st.runExists).QueryRowContext(ctx, r.TriggerID).Scan(&one))
		}
		if err := s.statusIn(ctx, tx).apply(ctx, status); err != nil {
			return fmt.Errorf("set status of task %s: %w", status.TaskID, err)
		}
		accepted = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("accept run %s: %w", r.TriggerID, err)
	}
	return accepted, nil
}

// AddFeedback appends p.Feedback to the run's reports in one transaction.
// A final report ends the run: done (its error cleared) when Status is 0,
// else dead with the report's message, or "target reported status N", as
// error; FinishedAt is the report's At, Output the report's output when
// given, Deadline and NextAttempt cleared, the fence bumped; p.Status
// (the caller's) is applied to the task in the same transaction (none for
// a zero TaskID; a task that is gone is skipped: the report is kept). A
// zero At is now.
//
// An empty TriggerID or a report over its bounds (task.Feedback.Validate)
// is task.ErrInvalid, an unknown run task.ErrNotFound, a run that is
// neither running nor accepted, or that holds task.MaxFeedback reports,
// task.ErrConflict. It returns the run as stored.
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
	var out *task.Run
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = s.addFeedback(ctx, tx, p.TriggerID, fb, p.Status)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("add feedback to run %s: %w", p.TriggerID, err)
	}
	return out, nil
}

// addFeedback is AddFeedback inside its transaction.
func (s *Store) addFeedback(ctx context.Context, tx *sql.Tx, triggerID string, fb task.Feedback,
	status store.TaskStatusParams) (*task.Run, error) {
	var taskID, text string
	var state task.RunState
	if err := in(ctx, tx, s.st.runForFeedback).QueryRowContext(ctx, triggerID).Scan(&taskID, &state, &text); err != nil {
		return nil, translate(err)
	}
	if state != task.RunRunning && state != task.RunAccepted {
		return nil, fmt.Errorf("%w: the run is %s and takes no more feedback", task.ErrConflict, state)
	}
	reports, err := decodeFeedback(text)
	if err != nil {
		return nil, fmt.Errorf("decode feedback: %w", err)
	}
	if len(reports) >= task.MaxFeedback {
		return nil, fmt.Errorf("%w: the run holds %d reports, the most it keeps", task.ErrConflict, len(reports))
	}
	doc, err := encodeFeedback(append(reports, fb))
	if err != nil {
		return nil, err
	}
	if fb.Progress {
		r, err := scanRun(in(ctx, tx, s.st.addProgress).QueryRowContext(ctx, doc, triggerID))
		return r, translate(err)
	}
	final, msg := fb.Outcome()
	r, err := scanRun(in(ctx, tx, s.st.addFinal).QueryRowContext(ctx, doc, string(final), store.UnixMS(fb.At),
		task.Truncate(msg, task.MaxOutput), task.Truncate(fb.Output, task.MaxOutput), triggerID))
	if err != nil {
		return nil, translate(err)
	}
	if status.TaskID == "" {
		return r, nil
	}
	err = s.statusIn(ctx, tx).apply(ctx, status)
	if err != nil && !errors.Is(err, task.ErrNotFound) {
		return nil, fmt.Errorf("set status of task %s: %w", status.TaskID, err)
	}
	return r, nil
}

// ExpireAccepted times out accepted runs whose deadline is before now, the
// earliest deadline first, at most limit, in one transaction: each becomes
// task.RunTimeout, finished now, with an error naming its deadline (which
// stays), its fence bumped (a cancel of it as accepted is refused). Their tasks' last_status becomes timeout, mirrored onto their
// rows (tasks that are gone are skipped). It checks on a reader first, so
// that a call with nothing due takes no write lock.
func (s *Store) ExpireAccepted(ctx context.Context, now time.Time, limit int, status func(*task.Run) store.TaskStatusParams) ([]*task.Run, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("expire accepted runs: %w", err)
	}
	nowMS := store.UnixMS(now)
	var one int
	err := s.st.anyDueAccepted.QueryRowContext(ctx, nowMS).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("expire accepted runs: %w", err)
	}
	var out []*task.Run
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = s.expireAccepted(ctx, tx, nowMS, limit, status)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("expire accepted runs: %w", err)
	}
	return out, nil
}

// expireAccepted is ExpireAccepted inside its transaction.
func (s *Store) expireAccepted(ctx context.Context, tx *sql.Tx, now int64, limit int, status func(*task.Run) store.TaskStatusParams) ([]*task.Run, error) {
	type due struct {
		triggerID string
		deadline  int64
	}
	rs, err := in(ctx, tx, s.st.dueAccepted).QueryContext(ctx, now, limit)
	if err != nil {
		return nil, err
	}
	var dues []due
	for rs.Next() {
		var d due
		if err := rs.Scan(&d.triggerID, &d.deadline); err != nil {
			rs.Close()
			return nil, err
		}
		dues = append(dues, d)
	}
	if err := errors.Join(rs.Err(), rs.Close()); err != nil {
		return nil, err
	}
	timeout, apply := in(ctx, tx, s.st.timeoutRun), s.statusIn(ctx, tx)
	out := make([]*task.Run, 0, len(dues))
	for _, d := range dues {
		msg := "no final feedback before the deadline " + store.FromUnixMS(d.deadline).Format(time.RFC3339Nano)
		r, err := scanRun(timeout.QueryRowContext(ctx, now, msg, d.triggerID))
		if err != nil {
			return nil, fmt.Errorf("time out run %s: %w", d.triggerID, translate(err))
		}
		if p := store.StatusOf(status, r); p.TaskID != "" {
			err = apply.apply(ctx, p)
			if err != nil && !errors.Is(err, task.ErrNotFound) {
				return nil, fmt.Errorf("set status of task %s: %w", p.TaskID, err)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// QueryRuns returns runs matching q, newest first by (fired_at,
// trigger_id), strictly after the cursor q.Before when it is set (a
// non-zero FiredAt or TriggerID). Each filter combination has its own
// prepared statement and index (schema.go); the runs the history loop has
// not listed yet are read too (historyUnion). A limit that is not positive
// is task.ErrInvalid.
func (s *Store) QueryRuns(ctx context.Context, q store.RunQuery) ([]*task.Run, error) {
	if err := store.CheckLimit(q.Limit); err != nil {
		return nil, fmt.Errorf("query runs: %w", err)
	}
	variant, args := 0, make([]any, 0, 6)
	for _, f := range []struct {
		bit   int
		value string
	}{{byTask, q.TaskID}, {byTarget, q.Target}, {byState, string(q.State)}} {
		if f.value != "" {
			variant |= f.bit
			args = append(args, f.value)
		}
	}
	fired, triggerID := int64(math.MaxInt64), ""
	if !q.Before.FiredAt.IsZero() || q.Before.TriggerID != "" {
		fired, triggerID = store.UnixMS(q.Before.FiredAt), q.Before.TriggerID
	}
	args = append(args, fired, triggerID, q.Limit)
	runs, err := queryRuns(ctx, s.st.queryRuns[variant], args...)
	if err != nil {
		return nil, fmt.Errorf("query runs: %w", err)
	}
	return runs, nil
}

// CleanupRuns deletes finished runs (the final states only: never pending,
// running, failed or accepted ones), at most p.Limit, in one transaction:
// first those that finished before p.OlderThan (earliest first), then,
// per task, those beyond its newest p.KeepPerTask finished runs by slot
// (ties by target) among what is left. A zero rule is off; with both off
// nothing is deleted. A Limit that is not positive, or a negative
// KeepPerTask, is task.ErrInvalid.
func (s *Store) CleanupRuns(ctx context.Context, p store.CleanupParams) (int, error) {
	if err := store.CheckLimit(p.Limit); err != nil {
		return 0, fmt.Errorf("cleanup runs: %w", err)
	}
	if p.KeepPerTask < 0 {
		return 0, fmt.Errorf("cleanup runs: %w", task.Invalid("keep_per_task", "must not be negative, got %d", p.KeepPerTask))
	}
	if p.OlderThan.IsZero() && p.KeepPerTask == 0 {
		return 0, nil
	}
	var n int
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		n = 0
		if !p.OlderThan.IsZero() {
			k, err := execCount(ctx, in(ctx, tx, s.st.cleanupAge), store.UnixMS(p.OlderThan), p.Limit)
			if err != nil {
				return fmt.Errorf("runs finished before %s: %w", p.OlderThan.Format(time.RFC3339), err)
			}
			n += k
		}
		if p.KeepPerTask > 0 && n < p.Limit {
			k, err := execCount(ctx, in(ctx, tx, s.st.cleanupKeep), p.KeepPerTask, p.Limit-n)
			if err != nil {
				return fmt.Errorf("runs beyond %d per task: %w", p.KeepPerTask, err)
			}
			n += k
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("cleanup runs: %w", err)
	}
	return n, nil
}
