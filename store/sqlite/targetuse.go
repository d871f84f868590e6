package sqlite

import (
	"context"
	"fmt"

	"cronsheet/store"
)

// tasksUsingTarget matches the rows' tasks not deleted whose document names
// the target (?1) among its targets or alert targets. It scans time_task: a
// target is deleted rarely, and no index serves a match inside JSON arrays.
const tasksUsingTarget = `FROM time_task WHERE deleted = 0 AND row_id != '' AND (
	EXISTS (SELECT 1 FROM json_each(doc, '$.targets') WHERE value = ?1) OR
	EXISTS (SELECT 1 FROM json_each(doc, '$.alert.targets') WHERE value = ?1))`

// TasksUsingTarget returns the tasks naming target id, see
// store.TargetUsers.
func (s *Store) TasksUsingTarget(ctx context.Context, id string, limit int) ([]string, int, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, 0, fmt.Errorf("tasks using target %s: %w", id, err)
	}
	var total int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) `+tasksUsingTarget, id).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("tasks using target %s: %w", id, err)
	}
	if total == 0 {
		return nil, 0, nil
	}
	rs, err := s.r.QueryContext(ctx, `SELECT task_id `+tasksUsingTarget+` ORDER BY task_id LIMIT ?2`, id, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("tasks using target %s: %w", id, err)
	}
	defer rs.Close()
	var ids []string
	for rs.Next() {
		var tid string
		if err := rs.Scan(&tid); err != nil {
			return nil, 0, fmt.Errorf("tasks using target %s: %w", id, err)
		}
		ids = append(ids, tid)
	}
	if err := rs.Err(); err != nil {
		return nil, 0, fmt.Errorf("tasks using target %s: %w", id, err)
	}
	return ids, total, nil
}
