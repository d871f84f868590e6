package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"cronsheet/store"
	"cronsheet/task"
)

var _ store.Dumper = (*Store)(nil)

// The queries of store.Dumper run rarely (export, import), so they are not
// prepared in Open.
const (
	qDumpRows   = `SELECT ` + rowCols + ` FROM rows ORDER BY scenario, id`
	qDumpTasks  = `SELECT ` + taskCols + `, deleted FROM time_task ORDER BY id`
	qDumpRuns   = `SELECT ` + runCols + ` FROM runs ORDER BY task_id, slot, target`
	qDumpOutbox = `SELECT id, task_id, trigger_id, channel, recipient, subject, body, created_at
		FROM outbox ORDER BY id`
	qRestoreRow = `INSERT INTO rows (` + rowCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (scenario, id) DO NOTHING`
	qRestoreTask = `INSERT INTO time_task (task_id, scenario, row_id, doc, is_enable, is_claimed,
			claimed_by, lease_until, is_done, deleted, next_fire, last_fire, last_status, version,
			created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, 0, '', 0, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (task_id) DO NOTHING`
)

// DumpRows calls fn with every row, in (scenario, id) order.
func (s *Store) DumpRows(ctx context.Context, fn func(*task.Row) error) error {
	err := s.each(ctx, qDumpRows, func(rs *sql.Rows) error {
		row, err := scanRow(rs)
		if err != nil {
			return err
		}
		return fn(row)
	})
	if err != nil {
		return fmt.Errorf("dump rows: %w", err)
	}
	return nil
}

// DumpTasks calls fn with every task, oldest first, without its claim.
func (s *Store) DumpTasks(ctx context.Context, fn func(store.TaskDump) error) error {
	err := s.each(ctx, qDumpTasks, func(rs *sql.Rows) error {
		var deleted int
		t, err := scanTask(extraScan{rs, []any{&deleted}})
		if err != nil {
			return err
		}
		t.IsClaimed, t.ClaimedBy, t.LeaseUntil = 0, "", store.FromUnixMS(0)
		return fn(store.TaskDump{Task: t, Deleted: deleted == 1})
	})
	if err != nil {
		return fmt.Errorf("dump tasks: %w", err)
	}
	return nil
}

// extraScan scans the columns after the ones its caller asks for into
// extra.
type extraScan struct {
	sc    scanner
	extra []any
}

func (e extraScan) Scan(dest ...any) error { return e.sc.Scan(append(dest, e.extra...)...) }

// DumpRuns calls fn with every run, in (task_id, slot, target) order.
func (s *Store) DumpRuns(ctx context.Context, fn func(*task.Run) error) error {
	err := s.each(ctx, qDumpRuns, func(rs *sql.Rows) error {
		r, err := scanRun(rs)
		if err != nil {
			return err
		}
		return fn(r)
	})
	if err != nil {
		return fmt.Errorf("dump runs: %w", err)
	}
	return nil
}

// DumpOutbox calls fn with every outbox message, oldest id first.
func (s *Store) DumpOutbox(ctx context.Context, fn func(*task.OutboxMessage) error) error {
	err := s.each(ctx, qDumpOutbox, func(rs *sql.Rows) error {
		var (
			m       task.OutboxMessage
			created int64
		)
		if err := rs.Scan(&m.ID, &m.TaskID, &m.TriggerID, &m.Channel, &m.To, &m.Subject, &m.Body, &created); err != nil {
			return err
		}
		m.CreatedAt = store.FromUnixMS(created)
		return fn(&m)
	})
	if err != nil {
		return fmt.Errorf("dump outbox: %w", err)
	}
	return nil
}

// each runs query on the read pool and calls fn for each result row.
func (s *Store) each(ctx context.Context, query string, fn func(*sql.Rows) error) error {
	rs, err := s.r.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		if err := fn(rs); err != nil {
			return err
		}
	}
	return rs.Err()
}

// RestoreRow stores row as dumped unless its (scenario, id) is stored.
func (s *Store) RestoreRow(ctx context.Context, row *task.Row) (bool, error) {
	if row.ID == "" {
		return false, fmt.Errorf("restore row: %w", task.Invalid("id", "required"))
	}
	fields, err := json.Marshal(row.Fields)
	if err != nil {
		return false, fmt.Errorf("restore row %s/%s: %w", row.Scenario, row.ID, err)
	}
	res, err := s.w.ExecContext(ctx, qRestoreRow, row.Scenario, row.ID, string(fields), row.IsFetched,
		row.IsActive, row.Error, store.UnixMS(row.NextFire), store.UnixMS(row.LastFire), row.LastStatus, max(row.Version, 1),
		store.UnixMS(row.CreatedAt), store.UnixMS(row.UpdatedAt))
	if err != nil {
		return false, fmt.Errorf("restore row %s/%s: %w", row.Scenario, row.ID, translate(err))
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RestoreTask stores a task as dumped, unclaimed, unless its task_id is
// stored. A job that holds a key (Job.Key set) takes it back in the same
// transaction, unless another job holds it.
func (s *Store) RestoreTask(ctx context.Context, d store.TaskDump) (bool, error) {
	t := d.Task
	if t == nil || t.TaskID == "" {
		return false, fmt.Errorf("restore task: %w", task.Invalid("task_id", "required"))
	}
	d0 := docOf(t, store.UnixMS(t.Anchor))
	doc, err := d0.marshal()
	if err != nil {
		return false, fmt.Errorf("restore task %s: %w", t.TaskID, err)
	}
	deleted := 0
	if d.Deleted {
		deleted = 1
	}
	var inserted bool
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, qRestoreTask, t.TaskID, t.Scenario, t.RowID, doc, t.IsEnable,
			t.IsDone, deleted, store.UnixMS(t.NextFire), store.UnixMS(t.LastFire), t.LastStatus, max(t.Version, 1),
			store.UnixMS(t.CreatedAt), store.UnixMS(t.UpdatedAt))
		if err != nil {
			return translate(err)
		}
		n, err := res.RowsAffected()
		if err != nil || n != 1 {
			return err
		}
		inserted = true
		if t.Job == nil || t.Job.Key == "" {
			return nil
		}
		_, err = tx.ExecContext(ctx, qRestoreJobKey, t.Job.Key, t.TaskID)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("restore task %s: %w", t.TaskID, err)
	}
	return inserted, nil
}
