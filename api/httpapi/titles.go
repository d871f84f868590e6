package httpapi

import (
	"context"
	"fmt"

	"cronsheet/task"
)

// TaskGetter reads tasks by id; every store the server accepts is one.
type TaskGetter interface {
	// GetTasks returns the tasks with the given ids that exist.
	GetTasks(ctx context.Context, taskIDs []string) ([]*task.Task, error)
}

// TaskTitles returns the titles (task.Task.Title) of the tasks with the
// given ids, read in one batch, so an answer can name its tasks rather
// than show their ids. Repeated ids are read once; a task that has no
// title or no longer exists is absent from the map.
func TaskTitles(ctx context.Context, tasks TaskGetter, ids []string) (map[string]string, error) {
	seen := make(map[string]bool, len(ids))
	unique := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			unique = append(unique, id)
		}
	}
	if len(unique) == 0 {
		return map[string]string{}, nil
	}
	ts, err := tasks.GetTasks(ctx, unique)
	if err != nil {
		return nil, fmt.Errorf("read the titles of %d tasks: %w", len(unique), err)
	}
	titles := make(map[string]string, len(ts))
	for _, t := range ts {
		if title := t.Title(); title != "" {
			titles[t.TaskID] = title
		}
	}
	return titles, nil
}
