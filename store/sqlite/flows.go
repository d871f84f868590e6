package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// Flows (store.Flows) live in the flows table (the flow as JSON in doc,
// bookkeeping in columns, like targets) and executions in flow_executions
// (the execution as JSON in doc; flow_id, state and started_at in columns
// for the listings, version for the compare-and-set). Step tasks are
// time_task rows without a row, inserted like jobs.

const flowCols = `id, doc, version, created_at, updated_at`

const (
	qInsertFlow  = `INSERT INTO flows (` + flowCols + `) VALUES (?, ?, 1, ?, ?)`
	qGetFlow     = `SELECT ` + flowCols + ` FROM flows WHERE id = ?`
	qFlowVersion = `SELECT version FROM flows WHERE id = ?`
	qUpdateFlow  = `UPDATE flows SET doc = ?, version = version + 1, updated_at = ?
		WHERE id = ? RETURNING ` + flowCols
	qDeleteFlow = `DELETE FROM flows WHERE id = ?`
	qListFlows  = `SELECT ` + flowCols + ` FROM flows WHERE id > ? ORDER BY id LIMIT ?`

	qInsertExec = `INSERT INTO flow_executions (id, flow_id, state, started_at, doc, version)
		VALUES (?, ?, ?, ?, ?, 1)`
	qGetExec    = `SELECT doc, version FROM flow_executions WHERE id = ?`
	qExecExists = `SELECT 1 FROM flow_executions WHERE id = ?`
	qUpdateExec = `UPDATE flow_executions SET state = ?, doc = ?, version = version + 1
		WHERE id = ? AND version = ?`
	qListExecs = `SELECT doc, version FROM flow_executions WHERE flow_id = ?
		ORDER BY started_at DESC, id DESC LIMIT ?`
	qRunningExecs = `SELECT doc, version FROM flow_executions WHERE state = 'running'
		ORDER BY started_at, id LIMIT ?`
)

// flowDocOf returns the doc text of f: f without its id, version and times.
func flowDocOf(f *task.Flow) (string, error) {
	d := *f
	d.ID, d.Version, d.CreatedAt, d.UpdatedAt = "", 0, time.Time{}, time.Time{}
	b, err := json.Marshal(&d)
	return string(b), err
}

func scanFlow(sc scanner) (*task.Flow, error) {
	var (
		id, doc          string
		version          int64
		created, updated int64
	)
	if err := sc.Scan(&id, &doc, &version, &created, &updated); err != nil {
		return nil, err
	}
	var f task.Flow
	if err := json.Unmarshal([]byte(doc), &f); err != nil {
		return nil, fmt.Errorf("decode flow %s: %w", id, err)
	}
	f.ID, f.Version = id, version
	f.CreatedAt, f.UpdatedAt = store.FromUnixMS(created), store.FromUnixMS(updated)
	return &f, nil
}

// CreateFlow stores a new flow with version 1; a taken id is
// task.ErrConflict.
func (s *Store) CreateFlow(ctx context.Context, f *task.Flow) error {
	if f == nil || f.ID == "" {
		return fmt.Errorf("create flow: %w", task.Invalid("id", "required"))
	}
	doc, err := flowDocOf(f)
	if err != nil {
		return fmt.Errorf("create flow %s: %w", f.ID, err)
	}
	now := s.nowMS()
	if _, err := s.w.ExecContext(ctx, qInsertFlow, f.ID, doc, now, now); err != nil {
		return fmt.Errorf("create flow %s: %w", f.ID, translate(err))
	}
	f.Version = 1
	f.CreatedAt, f.UpdatedAt = store.FromUnixMS(now), store.FromUnixMS(now)
	return nil
}

// GetFlow returns a flow or task.ErrNotFound.
func (s *Store) GetFlow(ctx context.Context, id string) (*task.Flow, error) {
	f, err := scanFlow(s.r.QueryRowContext(ctx, qGetFlow, id))
	if err != nil {
		return nil, fmt.Errorf("get flow %s: %w", id, translate(err))
	}
	return f, nil
}

// UpdateFlow replaces a flow's fields and bumps its version, checking
// ifVersion (when > 0) in the same transaction.
func (s *Store) UpdateFlow(ctx context.Context, f *task.Flow, ifVersion int64) (*task.Flow, error) {
	doc, err := flowDocOf(f)
	if err != nil {
		return nil, fmt.Errorf("update flow %s: %w", f.ID, err)
	}
	var out *task.Flow
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var v int64
		if err := tx.QueryRowContext(ctx, qFlowVersion, f.ID).Scan(&v); err != nil {
			return translate(err)
		}
		if ifVersion > 0 && v != ifVersion {
			return fmt.Errorf("%w: flow %s is at version %d, not %d", task.ErrConflict, f.ID, v, ifVersion)
		}
		out, err = scanFlow(tx.QueryRowContext(ctx, qUpdateFlow, doc, s.nowMS(), f.ID))
		return translate(err)
	})
	if err != nil {
		return nil, fmt.Errorf("update flow %s: %w", f.ID, err)
	}
	return out, nil
}

// DeleteFlow removes a flow; a missing one is task.ErrNotFound.
func (s *Store) DeleteFlow(ctx context.Context, id string) error {
	res, err := s.w.ExecContext(ctx, qDeleteFlow, id)
	if err != nil {
		return fmt.Errorf("delete flow %s: %w", id, translate(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("delete flow %s: %w", id, task.ErrNotFound)
	}
	return nil
}

// ListFlows pages flows in id order after afterID.
func (s *Store) ListFlows(ctx context.Context, afterID string, limit int) ([]*task.Flow, error) {
	rows, err := s.r.QueryContext(ctx, qListFlows, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("list flows: %w", err)
	}
	defer rows.Close()
	var out []*task.Flow
	for rows.Next() {
		f, err := scanFlow(rows)
		if err != nil {
			return nil, fmt.Errorf("list flows: %w", err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list flows: %w", err)
	}
	return out, nil
}

// execDocOf returns the doc text of e without its version.
func execDocOf(e *task.Execution) (string, error) {
	d := *e
	d.Version = 0
	b, err := json.Marshal(&d)
	return string(b), err
}

func scanExec(sc scanner) (*task.Execution, error) {
	var (
		doc     string
		version int64
	)
	if err := sc.Scan(&doc, &version); err != nil {
		return nil, err
	}
	var e task.Execution
	if err := json.Unmarshal([]byte(doc), &e); err != nil {
		return nil, fmt.Errorf("decode execution: %w", err)
	}
	e.Version = version
	return &e, nil
}

// CreateExecution stores a new execution with version 1.
func (s *Store) CreateExecution(ctx context.Context, e *task.Execution) error {
	doc, err := execDocOf(e)
	if err != nil {
		return fmt.Errorf("create execution %s: %w", e.ID, err)
	}
	if _, err := s.w.ExecContext(ctx, qInsertExec, e.ID, e.FlowID, string(e.State),
		store.UnixMS(e.StartedAt), doc); err != nil {
		return fmt.Errorf("create execution %s: %w", e.ID, translate(err))
	}
	e.Version = 1
	return nil
}

// GetExecution returns an execution or task.ErrNotFound.
func (s *Store) GetExecution(ctx context.Context, id string) (*task.Execution, error) {
	e, err := scanExec(s.r.QueryRowContext(ctx, qGetExec, id))
	if err != nil {
		return nil, fmt.Errorf("get execution %s: %w", id, translate(err))
	}
	return e, nil
}

// UpdateExecution replaces an execution while its version is e.Version.
func (s *Store) UpdateExecution(ctx context.Context, e *task.Execution) error {
	doc, err := execDocOf(e)
	if err != nil {
		return fmt.Errorf("update execution %s: %w", e.ID, err)
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, qUpdateExec, string(e.State), doc, e.ID, e.Version)
		if err != nil {
			return translate(err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		var one int
		if err := tx.QueryRowContext(ctx, qExecExists, e.ID).Scan(&one); err != nil {
			return translate(err)
		}
		return fmt.Errorf("%w: execution %s moved past version %d", task.ErrConflict, e.ID, e.Version)
	})
	if err != nil {
		return fmt.Errorf("update execution %s: %w", e.ID, err)
	}
	e.Version++
	return nil
}

// ListExecutions returns a flow's executions, newest first.
func (s *Store) ListExecutions(ctx context.Context, flowID string, limit int) ([]*task.Execution, error) {
	return s.queryExecs(ctx, "list executions", qListExecs, flowID, limit)
}

// RunningExecutions returns running executions, oldest first.
func (s *Store) RunningExecutions(ctx context.Context, limit int) ([]*task.Execution, error) {
	return s.queryExecs(ctx, "running executions", qRunningExecs, limit)
}

func (s *Store) queryExecs(ctx context.Context, what, q string, args ...any) ([]*task.Execution, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []*task.Execution
	for rows.Next() {
		e, err := scanExec(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// EnsureTask inserts t as a task without a row unless its id exists.
func (s *Store) EnsureTask(ctx context.Context, t *task.Task) error {
	if t == nil || t.TaskID == "" || t.RowID != "" {
		return fmt.Errorf("ensure task: %w", task.Invalid("task_id", "required, without a row"))
	}
	now := s.nowMS()
	err := s.inTx(ctx, func(tx *sql.Tx) error { return s.insertJob(ctx, in(ctx, tx, s.st.insertTask), t, now) })
	switch {
	case errors.Is(err, task.ErrConflict):
		return nil
	case err != nil:
		return fmt.Errorf("ensure task %s: %w", t.TaskID, err)
	}
	setCreated(t, now)
	return nil
}

var _ store.Flows = (*Store)(nil)
