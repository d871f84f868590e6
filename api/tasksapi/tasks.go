package tasksapi

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// triggerBody is the optional body of POST /api/v1/tasks/:task_id/trigger.
type triggerBody struct {
	// Params override the task's params for this run only.
	Params map[string]string `json:"params"`
}

// triggerAnswer is the answer of POST /api/v1/tasks/:task_id/trigger: the
// runs made, one per target; Error, on a 409, says why none was accepted.
type triggerAnswer struct {
	Error string      `json:"error,omitempty"`
	Code  task.Code   `json:"code,omitempty"`
	Runs  []*task.Run `json:"runs"`
}

// stateBody is the body of PUT /api/v1/tasks/:task_id/state.
type stateBody struct {
	State task.State `json:"state"`
}

// triggerTask handles POST /api/v1/tasks/:task_id/trigger with an optional
// body {"params": {...}}: the task fires now, by hand ("run now"), once per
// target. 202 {"runs": [...]} when at least one run was not rejected (their
// deliveries go on in the background); 409 {"error": the reasons, "runs":
// [...]} when every run was rejected (the task is closed, its targets
// preset, …); 400 for bad params; 404 for an unknown task; 409 when the
// task was already fired at this instant (or cannot fire at all), or when
// it is a job (see notAJob); 501 when this API has no firer.
func (a *API) triggerTask(c *gin.Context) {
	if a.trigger == nil {
		httpapi.NotImplemented(c, "manual triggers are not available on this server")
		return
	}
	id, err := httpapi.PathID(c, "task_id")
	if err != nil {
		a.WriteError(c, err)
		return
	}
	var body triggerBody
	if err := httpapi.ReadJSON(c, &body, true); err != nil {
		a.WriteError(c, err)
		return
	}
	if err := task.ValidParams("params", body.Params); err != nil {
		a.WriteError(c, err)
		return
	}
	if err := a.notAJob(c, id); err != nil {
		a.WriteError(c, err)
		return
	}
	runs, err := a.trigger(c.Request.Context(), id, body.Params)
	if err != nil {
		if errors.Is(err, task.ErrConflict) {
			err = httpapi.WithMessage(err, err.Error())
		}
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "task %q not found", task.Truncate(id, 100)))
		return
	}
	if runs == nil {
		runs = []*task.Run{}
	}
	keys := slices.Sorted(maps.Keys(body.Params))
	a.RecordChange(c, store.AuditKindTask, id, store.AuditTrigger, map[string]any{"runs": len(runs), "params": keys})
	if why := rejected(runs); why != "" {
		c.AbortWithStatusJSON(http.StatusConflict, triggerAnswer{Error: why, Code: task.CodeConflict, Runs: runs})
		return
	}
	c.JSON(http.StatusAccepted, triggerAnswer{Runs: runs})
}

// rejected returns "" when a run of runs was not rejected, else why none
// went out: the one reason they share, or each target's.
func rejected(runs []*task.Run) string {
	if len(runs) == 0 {
		return "the trigger made no run"
	}
	var reasons []string
	same := true
	for _, r := range runs {
		if r.State != task.RunRejected {
			return ""
		}
		why := r.Error
		if why == "" {
			why = "rejected"
		}
		same = same && why == runs[0].Error
		reasons = append(reasons, "target "+r.Target+": "+why)
	}
	if same && runs[0].Error != "" {
		return runs[0].Error
	}
	return strings.Join(reasons, "; ")
}

// setTaskState handles PUT /api/v1/tasks/:task_id/state {"state": running |
// stopped | closed}: 200 with the task. The change releases the task's
// claim, and the patrols are woken so the node re-arms it under its new
// state at once; back to running, its schedule counts from now (slots
// missed meanwhile are not misfires). 400 bad state, 404 unknown task,
// 409 for a job (see notAJob).
func (a *API) setTaskState(c *gin.Context) {
	id, err := httpapi.PathID(c, "task_id")
	if err != nil {
		a.WriteError(c, err)
		return
	}
	var body stateBody
	if err := httpapi.ReadJSON(c, &body, false); err != nil {
		a.WriteError(c, err)
		return
	}
	switch {
	case body.State == "":
		a.WriteError(c, task.Invalid("state", "required: running, stopped or closed"))
		return
	case !body.State.Valid():
		a.WriteError(c, task.Invalid("state", "must be running, stopped or closed; got %q", task.Truncate(string(body.State), 40)))
		return
	}
	if err := a.notAJob(c, id); err != nil {
		a.WriteError(c, err)
		return
	}
	now := a.Now()
	t, err := a.store.SetTaskState(c.Request.Context(), store.TaskStateParams{
		TaskID: id, State: body.State, Anchor: mapping.Anchor(now), Now: now,
	})
	if err != nil {
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "task %q not found", task.Truncate(id, 100)))
		return
	}
	a.wake()
	a.RecordChange(c, store.AuditKindTask, id, store.AuditState, map[string]any{"state": string(body.State)})
	c.JSON(http.StatusOK, t)
}

// getTask handles GET /api/v1/tasks/:task_id.
func (a *API) getTask(c *gin.Context) {
	id := c.Param("task_id")
	t, err := a.store.GetTask(c.Request.Context(), id)
	if err != nil {
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "task %q not found", id))
		return
	}
	hideIdleNextFire(t)
	if t.Job != nil {
		t.Job = t.Job.Redacted() // a job's headers are write-only
	}
	c.JSON(http.StatusOK, t)
}
