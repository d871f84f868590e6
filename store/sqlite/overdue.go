package sqlite

import (
	"context"
	"fmt"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// qOverdue repeats ix_task_absent's WHERE, which lets it name the index
// (without INDEXED BY the planner, knowing no statistics, picks ix_task_due).
const qOverdue = `SELECT ` + taskCols + ` FROM time_task INDEXED BY ix_task_absent
	WHERE ` + absentWhere + ` AND next_fire > 0 AND next_fire < ?
	ORDER BY next_fire LIMIT ?`

// OverdueTasks returns the enabled, undone tasks alerting on absence whose
// next fire is before `before`, soonest first, at most limit. The partial
// index ix_task_absent holds only tasks alerting on absence, so fires of
// the others never write it.
func (s *Store) OverdueTasks(ctx context.Context, before time.Time, limit int) ([]*task.Task, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("overdue tasks: %w", err)
	}
	rs, err := s.r.QueryContext(ctx, qOverdue, store.UnixMS(before), limit)
	if err != nil {
		return nil, fmt.Errorf("overdue tasks: %w", translate(err))
	}
	defer rs.Close()
	var out []*task.Task
	for rs.Next() {
		t, err := scanTask(rs)
		if err != nil {
			return nil, fmt.Errorf("overdue tasks: %w", err)
		}
		out = append(out, t)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("overdue tasks: %w", err)
	}
	return out, nil
}
