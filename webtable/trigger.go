package webtable

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"cronsheet/task"
)

// triggerTask handles POST /api/v1/tasks/:task_id/trigger: the task fires
// now, by hand ("run now"). 202 with the run as recorded (its delivery goes
// on in the background); 404 for an unknown task; 409 when the task is
// disabled, done or closed, or was already fired at this instant; 501 when
// this API has no firer.
func (a *API) triggerTask(c *gin.Context) {
	if a.trigger == nil {
		// Not through writeError: it hides the message of every 5xx.
		c.AbortWithStatusJSON(http.StatusNotImplemented, errorBody{Error: "manual triggers are not available on this server"})
		return
	}
	id := c.Param("task_id")
	if len(id) > maxQueryLen {
		a.writeError(c, task.Invalid("task_id", "longer than %d bytes", maxQueryLen))
		return
	}
	run, err := a.trigger(c.Request.Context(), id)
	if err != nil {
		if errors.Is(err, task.ErrConflict) {
			err = &apiError{msg: err.Error(), err: err}
		}
		a.writeError(c, describe(err, task.ErrNotFound, "task %q not found", task.Truncate(id, 100)))
		return
	}
	c.JSON(http.StatusAccepted, run)
}
