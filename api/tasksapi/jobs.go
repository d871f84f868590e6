package tasksapi

import (
	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/task"
)

// notAJob is nil unless task id is a job, or the error of reading it. A
// job's state and fires belong to the jobs API, which keeps its rules
// (exactly one of cancel and fire wins, a cancelled job stays cancelled,
// a backfill runs once) and records each transition: the tasks API
// changes no job, it answers 409 naming the jobs API's endpoints. An
// unknown task is 404 as for every other task endpoint.
func (a *API) notAJob(c *gin.Context, id string) error {
	t, err := a.store.GetTask(c.Request.Context(), id)
	if err != nil {
		return httpapi.Describe(err, task.ErrNotFound, "task %q not found", task.Truncate(id, 100))
	}
	if t.Job == nil && t.Scenario != task.JobScenario {
		return nil
	}
	id = task.Truncate(id, 100)
	return task.Conflict(task.CodeConflict, "task %s is a job; change it through the jobs API: "+
		"DELETE /api/v1/jobs/%s to cancel it, POST /api/v1/jobs/%s/block or /unblock, "+
		"POST /api/v1/jobs/backfill {\"ids\": [\"%s\"]} to re-run it", id, id, id, id)
}
