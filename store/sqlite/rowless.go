package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"cronsheet/store"
)

const (
	// qRowlessClaimed lists owner's claims whose row is gone: the owner's
	// claims by ix_task_owner, each row by its primary key.
	qRowlessClaimed = `SELECT t.task_id, t.version FROM time_task t
		WHERE t.claimed_by = ? AND t.is_claimed = 1 AND t.row_id <> '' AND t.deleted = 0
		AND NOT EXISTS (SELECT 1 FROM rows r WHERE r.scenario = t.scenario AND r.id = t.row_id)`
	// qRetireRowless retires one of them at the version read, and only
	// while its row is still gone.
	qRetireRowless = `UPDATE time_task SET deleted = 1, is_enable = 0, version = version + 1, arm_at = 0, updated_at = ?
		WHERE task_id = ? AND version = ? AND deleted = 0
		AND NOT EXISTS (SELECT 1 FROM rows r WHERE r.scenario = time_task.scenario AND r.id = time_task.row_id)`
)

// RetireRowless retires owner's claimed tasks whose row is gone
// (store.Tasks.RetireRowless). The search runs on the read pool, so the
// writer is taken only when there is a task to retire (rarely: a row
// deleted through the API retires its tasks itself).
func (s *Store) RetireRowless(ctx context.Context, owner string) ([]string, error) {
	type found struct {
		id      string
		version int64
	}
	rs, err := s.st.rowlessClaimed.QueryContext(ctx, owner)
	if err != nil {
		return nil, fmt.Errorf("list rowless tasks of %s: %w", owner, translate(err))
	}
	var todo []found
	for rs.Next() {
		var f found
		if err := rs.Scan(&f.id, &f.version); err != nil {
			rs.Close()
			return nil, fmt.Errorf("list rowless tasks of %s: %w", owner, err)
		}
		todo = append(todo, f)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list rowless tasks of %s: %w", owner, translate(err))
	}
	var out []string
	for start := 0; start < len(todo); start += store.MaxStatusBatch {
		chunk := todo[start:min(start+store.MaxStatusBatch, len(todo))]
		now := s.nowMS()
		var done []string
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			done = done[:0]
			for _, f := range chunk {
				res, err := in(ctx, tx, s.st.retireRowless).ExecContext(ctx, now, f.id, f.version)
				if err != nil {
					return err
				}
				if k, err := res.RowsAffected(); err != nil {
					return err
				} else if k == 1 {
					done = append(done, f.id)
				}
			}
			return nil
		})
		if err != nil {
			return out, fmt.Errorf("retire rowless tasks of %s: %w", owner, translate(err))
		}
		out = append(out, done...)
	}
	return out, nil
}
