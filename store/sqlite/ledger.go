package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

const runCols = `trigger_id, task_id, slot, target, trigger_type, state, attempt, node, fired_at,
	finished_at, next_attempt, error, output`

const (
	// qInsertRun is the ledger gate. It ignores a clash on the ledger key
	// only (the "OR IGNORE" of SQLITE-PROBE.md §7 limited to that key), so a
	// reused trigger_id still fails loudly as task.ErrConflict.
	qInsertRun = `INSERT INTO runs (` + runCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (task_id, slot, target) DO NOTHING`
	qUpdateRun = `UPDATE runs SET state = ?1, attempt = ?2, node = CASE WHEN ?3 <> '' THEN ?3 ELSE node END,
			fired_at = ?4, finished_at = ?5, next_attempt = ?6, error = ?7, output = ?8
		WHERE trigger_id = ?9`
	// qDeleteRun undoes a fire whose task vanished (RecordFires).
	qDeleteRun = `DELETE FROM runs WHERE trigger_id = ?`
	qGetRun    = `SELECT ` + runCols + ` FROM runs WHERE trigger_id = ?`
	// qListRuns walks UNIQUE(task_id, slot, target) backwards.
	qListRuns = `SELECT ` + runCols + ` FROM runs WHERE task_id = ? AND slot < ?
		ORDER BY slot DESC, target DESC LIMIT ?`
	qLastSlot = `SELECT slot FROM runs WHERE task_id = ? AND trigger_type IN ` + scheduledTriggers + `
		ORDER BY slot DESC LIMIT 1`
	qUnfinishedRuns = `SELECT ` + runCols + ` FROM runs WHERE task_id = ? AND state IN ` + unfinishedStates + `
		ORDER BY slot`
)

// InsertRun inserts r unless its (TaskID, Slot, Target) is already in the
// ledger, and reports whether it did. TriggerID and TaskID are required; an
// empty State is stored as pending; Error and Output are capped at
// task.MaxOutput. A TriggerID already used by another key is
// task.ErrConflict.
func (s *Store) InsertRun(ctx context.Context, r *task.Run) (bool, error) {
	args, err := insertRunArgs(r)
	if err != nil {
		return false, err
	}
	ok, err := insertRun(ctx, s.st.insertRun, args)
	if err != nil {
		return false, fmt.Errorf("insert run %s: %w", r.TriggerID, err)
	}
	return ok, nil
}

// RecordFire inserts r as InsertRun does and, only when it inserted,
// applies status as SetTaskStatus does, in one transaction: when status
// fails (a missing task is task.ErrNotFound) the run is not stored either.
// It reports whether it inserted.
func (s *Store) RecordFire(ctx context.Context, r *task.Run, status store.TaskStatusParams) (bool, error) {
	args, err := insertRunArgs(r)
	if err != nil {
		return false, fmt.Errorf("record fire: %w", err)
	}
	var inserted bool
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		ok, err := insertRun(ctx, in(ctx, tx, s.st.insertRun), args)
		if err != nil || !ok {
			return err
		}
		if err := s.statusIn(ctx, tx).apply(ctx, status); err != nil {
			return fmt.Errorf("set status of task %s: %w", status.TaskID, err)
		}
		inserted = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("record fire %s: %w", r.TriggerID, err)
	}
	return inserted, nil
}

// RecordFires records many fires in one transaction. A record whose task
// is missing has its just-inserted run deleted again, so it stores nothing
// while the others commit; any other failure fails the whole transaction.
func (s *Store) RecordFires(ctx context.Context, recs []store.FireRecord) ([]store.FireResult, error) {
	if len(recs) > store.MaxStatusBatch {
		return nil, fmt.Errorf("record fires: %w", task.Invalid("records", "%d is more than %d", len(recs), store.MaxStatusBatch))
	}
	results := make([]store.FireResult, len(recs))
	args := make([][]any, len(recs))
	for i, rec := range recs {
		if args[i], results[i].Err = insertRunArgs(rec.Run); results[i].Err != nil {
			results[i].Err = fmt.Errorf("record fire: %w", results[i].Err)
		}
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		insert, undo, status := in(ctx, tx, s.st.insertRun), in(ctx, tx, s.st.deleteRun), s.statusIn(ctx, tx)
		for i, rec := range recs {
			if args[i] == nil {
				continue
			}
			ok, err := insertRun(ctx, insert, args[i])
			if err != nil {
				return err
			}
			if !ok {
				continue // already fired
			}
			err = status.apply(ctx, rec.Status)
			if errors.Is(err, task.ErrNotFound) {
				if _, err := undo.ExecContext(ctx, rec.Run.TriggerID); err != nil {
					return err
				}
				results[i].Err = fmt.Errorf("record fire %s: task %s: %w", rec.Run.TriggerID, rec.Status.TaskID, err)
				continue
			}
			if err != nil {
				return fmt.Errorf("set status of task %s: %w", rec.Status.TaskID, err)
			}
			results[i].Inserted = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record %d fires: %w", len(recs), err)
	}
	return results, nil
}

// insertRunArgs checks r and returns the arguments of qInsertRun.
func insertRunArgs(r *task.Run) ([]any, error) {
	if r.TriggerID == "" {
		return nil, fmt.Errorf("insert run: %w", task.Invalid("trigger_id", "required"))
	}
	if r.TaskID == "" {
		return nil, fmt.Errorf("insert run %s: %w", r.TriggerID, task.Invalid("task_id", "required"))
	}
	state := r.State
	if state == "" {
		state = task.RunPending
	}
	return []any{r.TriggerID, r.TaskID, store.UnixMS(r.Slot), r.Target, string(r.TriggerType), string(state),
		r.Attempt, r.Node, store.UnixMS(r.FiredAt), store.UnixMS(r.FinishedAt), store.UnixMS(r.NextAttempt),
		task.Truncate(r.Error, task.MaxOutput), task.Truncate(r.Output, task.MaxOutput)}, nil
}

// insertRun runs the ledger gate and reports whether it inserted.
func insertRun(ctx context.Context, st *sql.Stmt, args []any) (bool, error) {
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// UpdateRun stores r's state, attempt, node (when set), times, error and
// output, found by TriggerID; task.ErrNotFound when absent.
func (s *Store) UpdateRun(ctx context.Context, r *task.Run) error {
	if err := updateRun(ctx, s.st.updateRun, r); err != nil {
		return fmt.Errorf("update run %s: %w", r.TriggerID, err)
	}
	return nil
}

// FinishRun stores r as UpdateRun does and applies status as SetTaskStatus
// does, in one transaction: all of it or, when either fails (a missing run
// or task is task.ErrNotFound), nothing.
func (s *Store) FinishRun(ctx context.Context, r *task.Run, status store.TaskStatusParams) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := updateRun(ctx, in(ctx, tx, s.st.updateRun), r); err != nil {
			return err
		}
		if err := s.statusIn(ctx, tx).apply(ctx, status); err != nil {
			return fmt.Errorf("set status of task %s: %w", status.TaskID, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("finish run %s: %w", r.TriggerID, err)
	}
	return nil
}

// updateRun runs qUpdateRun for r; task.ErrNotFound when r is absent.
func updateRun(ctx context.Context, st *sql.Stmt, r *task.Run) error {
	n, err := execCount(ctx, st, string(r.State), r.Attempt, r.Node, store.UnixMS(r.FiredAt),
		store.UnixMS(r.FinishedAt), store.UnixMS(r.NextAttempt), task.Truncate(r.Error, task.MaxOutput),
		task.Truncate(r.Output, task.MaxOutput), r.TriggerID)
	if err == nil && n == 0 {
		err = task.ErrNotFound
	}
	return err
}

// GetRun returns the run with triggerID or task.ErrNotFound.
func (s *Store) GetRun(ctx context.Context, triggerID string) (*task.Run, error) {
	r, err := scanRun(s.st.getRun.QueryRowContext(ctx, triggerID))
	if err != nil {
		return nil, fmt.Errorf("get run %s: %w", triggerID, translate(err))
	}
	return r, nil
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
	runs, err := queryRuns(ctx, s.st.listRuns, taskID, before, limit)
	if err != nil {
		return nil, fmt.Errorf("list runs of %s: %w", taskID, err)
	}
	return runs, nil
}

// LastSlot returns the latest schedule or misfire slot of taskID, or the
// zero time.
func (s *Store) LastSlot(ctx context.Context, taskID string) (time.Time, error) {
	var slot int64
	err := s.st.lastSlot.QueryRowContext(ctx, taskID).Scan(&slot)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("last slot of %s: %w", taskID, err)
	}
	return store.FromUnixMS(slot), nil
}

// UnfinishedRuns returns a task's runs that are not final, oldest slot
// first.
func (s *Store) UnfinishedRuns(ctx context.Context, taskID string) ([]*task.Run, error) {
	runs, err := queryRuns(ctx, s.st.unfinishedRuns, taskID)
	if err != nil {
		return nil, fmt.Errorf("unfinished runs of %s: %w", taskID, err)
	}
	return runs, nil
}

func queryRuns(ctx context.Context, st *sql.Stmt, args ...any) ([]*task.Run, error) {
	rs, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []*task.Run
	for rs.Next() {
		r, err := scanRun(rs)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

func scanRun(sc scanner) (*task.Run, error) {
	var (
		r                            task.Run
		slot, fired, finished, retry int64
	)
	err := sc.Scan(&r.TriggerID, &r.TaskID, &slot, &r.Target, &r.TriggerType, &r.State, &r.Attempt,
		&r.Node, &fired, &finished, &retry, &r.Error, &r.Output)
	if err != nil {
		return nil, err
	}
	r.Slot, r.FiredAt, r.FinishedAt, r.NextAttempt = store.FromUnixMS(slot), store.FromUnixMS(fired), store.FromUnixMS(finished), store.FromUnixMS(retry)
	return &r, nil
}
