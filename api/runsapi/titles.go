package runsapi

import (
	"context"

	"cronsheet/task"
)

// runView is a run as GET /api/v1/runs answers it: with its task's title,
// so pages name the task rather than show its id.
type runView struct {
	*task.Run
	// TaskTitle is the task's title (task.Task.Title); "" when the task
	// has none or no longer exists.
	TaskTitle string `json:"task_title,omitempty"`
}

// withTitles returns runs with their tasks' titles, read in one batch.
func (a *API) withTitles(ctx context.Context, runs []*task.Run) ([]runView, error) {
	out := make([]runView, len(runs))
	ids := make([]string, 0, len(runs))
	seen := make(map[string]bool, len(runs))
	for i, r := range runs {
		out[i].Run = r
		if !seen[r.TaskID] {
			seen[r.TaskID] = true
			ids = append(ids, r.TaskID)
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	tasks, err := a.store.GetTasks(ctx, ids)
	if err != nil {
		return nil, err
	}
	titles := make(map[string]string, len(tasks))
	for _, t := range tasks {
		titles[t.TaskID] = t.Title()
	}
	for i := range out {
		out[i].TaskTitle = titles[out[i].TaskID]
	}
	return out, nil
}
