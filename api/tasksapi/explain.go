package tasksapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/task"
)

// explainTask handles GET /api/v1/tasks/:task_id/explain?at=<RFC 3339
// instant>: why the task did, did not, will or will not fire at the slot
// at names (its first slot at or after at; without at, its next slot, or
// its latest missed one when it does not fire). 200 with the answer
// (report.Answer: the verdict, one sentence in English and in Simplified
// Chinese, and every check with its data); 400 naming at when it is not
// an instant; 404 unknown task; 409 for a job (see notAJob); 501 when
// this API has no explainer. Read-only: a viewer may call it.
func (a *API) explainTask(c *gin.Context) {
	if a.explain == nil {
		httpapi.NotImplemented(c, "explanations are not available on this server")
		return
	}
	id, err := httpapi.PathID(c, "task_id")
	if err != nil {
		a.WriteError(c, err)
		return
	}
	var at time.Time
	if raw, ok := c.GetQuery("at"); ok {
		if at, err = time.Parse(time.RFC3339Nano, raw); err != nil {
			a.WriteError(c, task.Invalid("at", "must be an RFC 3339 instant such as 2026-12-04T10:00:00Z; got %q",
				task.Truncate(raw, 60)))
			return
		}
	}
	if err := a.notAJob(c, id); err != nil {
		a.WriteError(c, err)
		return
	}
	answer, err := a.explain(c.Request.Context(), id, at)
	if err != nil {
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "task %q not found", task.Truncate(id, 100)))
		return
	}
	c.JSON(http.StatusOK, answer)
}
