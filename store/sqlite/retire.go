package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"cronsheet/store"
	"cronsheet/task"
)

// qRetireTask marks one task without a row deleted and disabled, as
// qRetireRowTasks does a row's.
const qRetireTask = `UPDATE time_task SET deleted = 1, is_enable = 0, version = version + 1, arm_at = 0, updated_at = ?
	WHERE task_id = ? AND row_id = '' AND deleted = 0`

// RetireTasks marks the tasks ids without a row deleted and disabled, in
// one transaction (store.Flows.RetireTasks).
func (s *Store) RetireTasks(ctx context.Context, ids []string) (int, error) {
	if len(ids) > store.MaxStatusBatch {
		return 0, task.Invalid("ids", "at most %d per call, got %d", store.MaxStatusBatch, len(ids))
	}
	if len(ids) == 0 {
		return 0, nil
	}
	now := s.nowMS()
	n := 0
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			res, err := tx.ExecContext(ctx, qRetireTask, now, id)
			if err != nil {
				return err
			}
			k, err := res.RowsAffected()
			if err != nil {
				return err
			}
			n += int(k)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("retire tasks: %w", translate(err))
	}
	return n, nil
}
