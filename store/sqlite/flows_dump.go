package sqlite

import (
	"context"
	"fmt"

	"cronsheet/store"
	"cronsheet/task"
)

const (
	qRestoreFlow = `INSERT INTO flows (` + flowCols + `) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	qRestoreExec = `INSERT INTO flow_executions (id, flow_id, state, started_at, doc, version)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	qExecsAfter = `SELECT doc, version FROM flow_executions WHERE id > ? ORDER BY id LIMIT ?`
)

// DumpFlows calls fn with every flow, in id order.
func (s *Store) DumpFlows(ctx context.Context, fn func(*task.Flow) error) error {
	return store.DumpFlowPages(ctx, s, fn)
}

// DumpExecutions calls fn with every execution, in id order.
func (s *Store) DumpExecutions(ctx context.Context, fn func(*task.Execution) error) error {
	return store.DumpExecutionPages(ctx, func(ctx context.Context, after string, limit int) ([]*task.Execution, error) {
		return s.queryExecs(ctx, "dump executions", qExecsAfter, after, limit)
	}, fn)
}

// RestoreFlow stores f as dumped unless its id is stored.
func (s *Store) RestoreFlow(ctx context.Context, f *task.Flow) (bool, error) {
	if f == nil || f.ID == "" {
		return false, fmt.Errorf("restore flow: %w", task.Invalid("id", "required"))
	}
	doc, err := flowDocOf(f)
	if err != nil {
		return false, fmt.Errorf("restore flow %s: %w", f.ID, err)
	}
	res, err := s.w.ExecContext(ctx, qRestoreFlow, f.ID, doc, max(f.Version, 1), store.UnixMS(f.CreatedAt), store.UnixMS(f.UpdatedAt))
	if err != nil {
		return false, fmt.Errorf("restore flow %s: %w", f.ID, translate(err))
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// RestoreExecution stores e as dumped unless its id is stored.
func (s *Store) RestoreExecution(ctx context.Context, e *task.Execution) (bool, error) {
	if e == nil || e.ID == "" {
		return false, fmt.Errorf("restore execution: %w", task.Invalid("id", "required"))
	}
	doc, err := execDocOf(e)
	if err != nil {
		return false, fmt.Errorf("restore execution %s: %w", e.ID, err)
	}
	res, err := s.w.ExecContext(ctx, qRestoreExec, e.ID, e.FlowID, string(e.State), store.UnixMS(e.StartedAt), doc, max(e.Version, 1))
	if err != nil {
		return false, fmt.Errorf("restore execution %s: %w", e.ID, translate(err))
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

var _ store.FlowDumper = (*Store)(nil)
