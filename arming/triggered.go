package arming

import (
	"context"
	"time"

	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/task"
)

// triggeredOnly reports whether t has no schedule to arm: a task that is
// not running (stopped: it fires only when triggered; closed: never) and
// has neither a cron schedule nor a job's due time (a flow's step task).
func triggeredOnly(t *task.Task) bool {
	return t.State != task.StateRunning && t.CronPara == "" && t.Job == nil
}

// holdTriggered arms a triggeredOnly task: held here without a schedule,
// its unfinished runs resumed, no next fire. There is no schedule to parse,
// so none is reported missing. It is stopped or closed, so the runs of it
// queued here (overlap: queue) end at once, as prepare ends those of a
// stopped task with a schedule, rather than when the run before them ends.
func (a *Armer) holdTriggered(ctx context.Context, t *task.Task, unfinished []*task.Run, runsRead time.Time) (armStep, error) {
	if _, err := a.firer.ResumeRuns(ctx, t, unfinished, runsRead); err != nil {
		return armStep{}, err
	}
	a.mu.Lock()
	a.gen++
	e := newArmedTask(t, fire.Slots{}, a.gen)
	a.removeJobLocked(t.TaskID)
	a.jobs[t.TaskID] = e
	a.mu.Unlock()
	a.firer.EndQueued(ctx, t.TaskID) // outside a.mu: the armer never holds it over the firer's lock
	return armStep{status: store.TaskStatusParams{TaskID: t.TaskID, SetNextFire: true}, entry: e}, nil
}
