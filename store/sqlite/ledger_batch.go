package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"cronsheet/store"
	"cronsheet/task"
)

// RecordFires records many fires in one transaction. A record whose task
// is missing stores nothing while the others commit; any other failure
// fails the whole transaction.
//
// Holding the writer, it first reads which of the records' tasks exist
// (one query per 500), then inserts the runs of those that do with one
// multi-row statement per insertRows records (the ledger gate, in record
// order, RETURNING what it inserted), and then applies the statuses. A
// status that sets nothing on a task of no row needs no statement: it only
// checks that the task exists, which the first read did. A record whose
// task is missing takes the one-by-one path (recordMissing), so what it
// answers is exactly what that path answers.
func (s *Store) RecordFires(ctx context.Context, recs []store.FireRecord) ([]store.FireResult, error) {
	if len(recs) > store.MaxStatusBatch {
		return nil, fmt.Errorf("record fires: %w", task.Invalid("records", "%d is more than %d", len(recs), store.MaxStatusBatch))
	}
	results, args := fireArgs(recs)
	err := s.inTx(ctx, func(tx *sql.Tx) error { return s.recordFiresIn(ctx, tx, recs, args, results) })
	if err != nil {
		return nil, fmt.Errorf("record %d fires: %w", len(recs), err)
	}
	return results, nil
}

// fireArgs is the insert arguments of each of recs (nil for a record that
// cannot be inserted, whose result then says why).
func fireArgs(recs []store.FireRecord) ([]store.FireResult, [][]any) {
	results := make([]store.FireResult, len(recs))
	args := make([][]any, len(recs))
	for i, rec := range recs {
		if args[i], results[i].Err = insertRunArgs(rec.Run); results[i].Err != nil {
			results[i].Err = fmt.Errorf("record fire: %w", results[i].Err)
		}
	}
	return results, args
}

// recordFiresIn is RecordFires's work in tx: results[i] gets recs[i]'s
// result; an error fails the transaction.
func (s *Store) recordFiresIn(ctx context.Context, tx *sql.Tx, recs []store.FireRecord, args [][]any, results []store.FireResult) error {
	qctx := batchCtx(ctx)
	ids := make([]string, 0, len(recs))
	for i, rec := range recs {
		if args[i] != nil {
			ids = append(ids, rec.Status.TaskID)
		}
	}
	rows, err := taskRowsIn(qctx, tx, ids)
	if err != nil {
		return err
	}
	var present []int // records to insert together
	for i, rec := range recs {
		if args[i] == nil {
			continue
		}
		if _, ok := rows[rec.Status.TaskID]; !ok {
			if err := s.recordMissing(qctx, tx, rec, args[i], &results[i]); err != nil {
				return err
			}
			continue
		}
		present = append(present, i)
	}
	inserted, err := insertRunsIn(qctx, tx, s.st.insertRuns, present, args)
	if err != nil {
		return err
	}
	status := s.statusIn(qctx, tx)
	for _, i := range present {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := recs[i]
		ok := inserted[rec.Run.TriggerID]
		if !ok {
			// Already fired; by this very record when a retry follows
			// a write whose answer was lost: then it is ours to
			// deliver, not a duplicate.
			if ok, err = s.ownsLedgerKey(qctx, tx, rec.Run); err != nil {
				return err
			}
		}
		if !ok {
			continue
		}
		if err := applyStatus(qctx, status, rec.Status, rows[rec.Status.TaskID]); err != nil {
			return fmt.Errorf("set status of task %s: %w", rec.Status.TaskID, err)
		}
		results[i].Inserted = true
	}
	return nil
}

// recordMissing records one fire whose task the batch's read did not find,
// one statement at a time: the ledger gate, then the status, which is
// task.ErrNotFound for a missing task and has the run deleted again.
func (s *Store) recordMissing(ctx context.Context, tx *sql.Tx, rec store.FireRecord, args []any, res *store.FireResult) error {
	ok, err := insertRun(ctx, in(ctx, tx, s.st.insertRun), args)
	if err != nil {
		return err
	}
	if !ok {
		if ok, err = s.ownsLedgerKey(ctx, tx, rec.Run); err != nil || !ok {
			return err
		}
	}
	err = s.statusIn(ctx, tx).apply(ctx, rec.Status)
	if errors.Is(err, task.ErrNotFound) {
		if _, err := in(ctx, tx, s.st.deleteRun).ExecContext(ctx, rec.Run.TriggerID); err != nil {
			return err
		}
		res.Err = fmt.Errorf("record fire %s: task %s: %w", rec.Run.TriggerID, rec.Status.TaskID, err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("set status of task %s: %w", rec.Status.TaskID, err)
	}
	res.Inserted = true
	return nil
}

// qTaskRows reads the row ids of the tasks in the placeholder list in.
func qTaskRows(in string) string {
	return `SELECT task_id, row_id FROM time_task WHERE task_id IN (` + in + `)`
}

// qInsertRuns is qInsertRun for n runs in one statement, answering the
// trigger ids it inserted; the runs are unlisted, as qInsertRun's.
func qInsertRuns(n int) string {
	row := "(" + strings.Repeat("?,", strings.Count(runCols, ",")+1) + "1)"
	return `INSERT INTO runs (` + runCols + `, unlisted) VALUES ` + strings.TrimSuffix(strings.Repeat(row+",", n), ",") +
		` ON CONFLICT (task_id, slot, target) DO NOTHING RETURNING trigger_id`
}

// taskRowsIn reads, in tx, which of the tasks ids exist: task id → its
// row id ("" for a task of no row).
func taskRowsIn(ctx context.Context, tx *sql.Tx, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	err := eachChunk(ids, func(in string, a []any) error {
		rs, err := tx.QueryContext(ctx, qTaskRows(in), a...)
		if err != nil {
			return translate(err)
		}
		defer rs.Close()
		for rs.Next() {
			var id, row string
			if err := rs.Scan(&id, &row); err != nil {
				return err
			}
			out[id] = row
		}
		return rs.Err()
	})
	return out, err
}

// applyStatus applies p to its task, of row rowID ("": of no row), as
// statusWriter.apply does: a status that sets nothing on a task of no row
// needs no statement (the caller read that the task exists), and another
// status on such a task no RETURNING.
func applyStatus(ctx context.Context, sw statusWriter, p store.TaskStatusParams, rowID string) error {
	switch {
	case rowID != "":
		return sw.apply(ctx, p)
	case statusMask(p) == 0:
		return nil
	}
	return sw.applyNoRow(ctx, p)
}

// insertRows is how many runs one statement of insertRunsIn inserts (17
// arguments each, well under SQLite's variable limit).
const insertRows = 100

// insertRunsIn runs the ledger gate for the records at, in their order, in
// statements of up to insertRows rows (full: the prepared statement of
// insertRows), and returns the trigger ids it
// inserted. A trigger id already used by another key fails the statement
// as task.ErrConflict, as qInsertRun does.
func insertRunsIn(ctx context.Context, tx *sql.Tx, full *sql.Stmt, at []int, args [][]any) (map[string]bool, error) {
	inserted := make(map[string]bool, len(at))
	if len(at) == 0 {
		return inserted, nil
	}
	for lo := 0; lo < len(at); lo += insertRows {
		chunk := at[lo:min(lo+insertRows, len(at))]
		a := make([]any, 0, len(chunk)*len(args[chunk[0]]))
		for _, i := range chunk {
			a = append(a, args[i]...)
		}
		var rs *sql.Rows
		var err error
		if len(chunk) == insertRows {
			rs, err = in(ctx, tx, full).QueryContext(ctx, a...)
		} else {
			rs, err = tx.QueryContext(ctx, qInsertRuns(len(chunk)), a...)
		}
		if err != nil {
			return nil, translate(err)
		}
		for rs.Next() {
			var id string
			if err := rs.Scan(&id); err != nil {
				rs.Close()
				return nil, err
			}
			inserted[id] = true
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return nil, translate(err)
		}
	}
	return inserted, nil
}

// FinishRuns finishes each record as FinishRun does, all in one
// transaction; a record that fails (a missing run or task, or a fenced
// run) stores nothing and is reported in errs, the others commit
// together. Any other failure fails the whole transaction.
//
// No savepoint per record (three more statements each, which cost a
// burst of outcomes ~10 % of its writes): holding the writer, it first
// reads which of the records' tasks exist (one query per 500); a record
// then makes its fenced run write, which changes nothing when it is
// refused, and only then the task's status, which can no longer miss its
// task.
func (s *Store) FinishRuns(ctx context.Context, recs []store.FireRecord) ([]error, error) {
	if len(recs) > store.MaxStatusBatch {
		return nil, fmt.Errorf("finish runs: %w", task.Invalid("recs", "at most %d per call", store.MaxStatusBatch))
	}
	errs := make([]error, len(recs))
	err := s.inTx(ctx, func(tx *sql.Tx) error { return s.finishRunsIn(ctx, tx, recs, errs) })
	if err != nil {
		return nil, fmt.Errorf("finish runs: %w", err)
	}
	return errs, nil
}

// finishRunsIn is FinishRuns's work in tx: errs[i] gets recs[i]'s error;
// an error fails the transaction.
func (s *Store) finishRunsIn(ctx context.Context, tx *sql.Tx, recs []store.FireRecord, errs []error) error {
	qctx := batchCtx(ctx)
	ids := make([]string, len(recs))
	for i, rec := range recs {
		ids[i] = rec.Status.TaskID
	}
	rows, err := taskRowsIn(qctx, tx, ids)
	if err != nil {
		return err
	}
	status, run := s.statusIn(qctx, tx), s.runWriterIn(qctx, tx)
	for i, rec := range recs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, ok := rows[rec.Status.TaskID]; !ok {
			errs[i] = fmt.Errorf("finish run %s: set status of task %s: %w", rec.Run.TriggerID, rec.Status.TaskID, task.ErrNotFound)
			continue
		}
		err := run.update(qctx, rec.Run)
		if err == nil {
			if err := applyStatus(qctx, status, rec.Status, rows[rec.Status.TaskID]); err != nil {
				return fmt.Errorf("set status of task %s: %w", rec.Status.TaskID, err)
			}
			continue
		}
		if !errors.Is(err, task.ErrNotFound) && !errors.Is(err, task.ErrFenced) && !errors.Is(err, task.ErrInvalid) {
			return fmt.Errorf("finish run %s: %w", rec.Run.TriggerID, err)
		}
		errs[i] = fmt.Errorf("finish run %s: %w", rec.Run.TriggerID, err)
	}
	return nil
}

var _ store.RunFinisher = (*Store)(nil)
