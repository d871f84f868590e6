package runsapi

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/store"
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
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.TaskID
	}
	titles, err := httpapi.TaskTitles(ctx, a.store, ids)
	if err != nil {
		return nil, err
	}
	out := make([]runView, len(runs))
	for i, r := range runs {
		out[i] = runView{Run: r, TaskTitle: titles[r.TaskID]}
	}
	return out, nil
}

// maxTitleFilter bounds the title filter, in bytes; maxTitleTasks is how
// many tasks it may match (each is one indexed query of a page).
const (
	maxTitleFilter = 200
	maxTitleTasks  = 50
)

// queryRuns returns the runs q matches, narrowed by the title filter
// when the request has one: the runs of every task whose title holds its
// words, merged newest first, at most q.Limit.
func (a *API) queryRuns(c *gin.Context, q store.RunQuery) ([]*task.Run, error) {
	ctx := c.Request.Context()
	title := strings.TrimSpace(c.Query("title"))
	if title == "" {
		return a.store.QueryRuns(ctx, q)
	}
	if len(title) > maxTitleFilter {
		return nil, task.Invalid("title", "at most %d bytes", maxTitleFilter)
	}
	if q.TaskID != "" {
		return nil, task.Invalid("title", "give either task_id or title, not both")
	}
	ids, err := a.store.TaskIDsByTitle(ctx, strings.Fields(title), maxTitleTasks+1)
	if err != nil {
		return nil, err
	}
	if len(ids) > maxTitleTasks {
		return nil, task.Invalid("title", "more than %d tasks have these words in their titles; add words", maxTitleTasks)
	}
	var all []*task.Run
	for _, id := range ids {
		q.TaskID = id
		runs, err := a.store.QueryRuns(ctx, q)
		if err != nil {
			return nil, err
		}
		all = append(all, runs...)
	}
	slices.SortFunc(all, func(x, y *task.Run) int {
		return cmp.Or(y.FiredAt.Compare(x.FiredAt), strings.Compare(y.TriggerID, x.TriggerID))
	})
	return all[:min(len(all), q.Limit)], nil
}
