package flows

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// A flow's schedule is fired by a hidden task of scenario Scenario whose
// one target is "flow:<id>" (task.FlowTarget: the builtin start_flow), so
// a schedule fire takes the same path as a table row targeting the flow:
// the fire ledger, then StartFired keyed by the run's trigger id. The
// flow's version is part of the task's id: an edit makes a new task and
// closes the old one, and a fire of an old one is refused.

// ScheduleTaskID is the id of the task that fires f's schedule.
func ScheduleTaskID(f *task.Flow) string {
	return scheduleTaskPrefix(f.ID) + strconv.FormatInt(f.Version, 10)
}

func scheduleTaskPrefix(flowID string) string { return "flowsched." + flowID + ".v" }

// scheduleTask is the task of f's schedule, anchored at now: running,
// enabled, periodic (once for a one-off schedule), to flow:<id>.
func scheduleTask(f *task.Flow, now time.Time) (*task.Task, error) {
	sched, err := f.ParseSchedule()
	if err != nil || sched == nil {
		return nil, err
	}
	t := &task.Task{
		TaskID: ScheduleTaskID(f), Scenario: Scenario, TaskType: task.ChannelBuiltin,
		TaskPara: "flow " + f.ID + " schedule", ExecuteType: task.Periodic,
		CronPara: sched.String(), TZ: sched.Location().String(),
		TTL: time.Duration(task.DefaultTTL), MaxRetries: task.DefaultRetries, Misfire: task.MisfireOnce,
		Targets: []string{task.FlowTargetID(f.ID)}, State: task.StateRunning, IsEnable: 1,
		Anchor: now.Truncate(time.Millisecond).UTC(),
	}
	if sched.IsOnce() {
		t.ExecuteType = task.Once
	}
	return t, nil
}

// SyncSchedule makes the schedule tasks follow a save of flow flowID:
// oldVersion is its version before (0 when created), cur the flow after
// (nil when deleted). The task of the old version is closed when the
// version moved on, and cur's is created when cur has a schedule. It is
// idempotent; Run calls SyncSchedules at start to finish what a crash
// between a save and this left undone, and a fire of a task this did not
// close is refused (StartFired).
func (e *Engine) SyncSchedule(ctx context.Context, flowID string, oldVersion int64, cur *task.Flow) error {
	var errs []error
	if oldVersion > 0 && (cur == nil || cur.Version != oldVersion) {
		errs = append(errs, e.closeTask(ctx, scheduleTaskPrefix(flowID)+strconv.FormatInt(oldVersion, 10)))
	}
	if cur != nil && cur.Schedule != "" {
		t, err := scheduleTask(cur, e.cfg.Now())
		if err == nil {
			err = e.st.EnsureTask(ctx, t)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("schedule of flow %s: %w", cur.ID, err))
		} else {
			e.cfg.Wake()
		}
	}
	return errors.Join(errs...)
}

// SyncSchedules ensures the schedule task of every flow with a schedule.
func (e *Engine) SyncSchedules(ctx context.Context) {
	after := ""
	for {
		list, err := e.st.ListFlows(ctx, after, resumeBatch)
		if err != nil {
			if ctx.Err() == nil {
				e.logger.ErrorContext(ctx, "list flows for their schedules", "error", err)
			}
			return
		}
		for _, f := range list {
			if err := e.SyncSchedule(ctx, f.ID, 0, f); err != nil && ctx.Err() == nil {
				e.logger.ErrorContext(ctx, "sync flow schedule", "flow_id", f.ID, "error", err)
			}
		}
		if len(list) < resumeBatch {
			return
		}
		after = list[len(list)-1].ID
	}
}

func (e *Engine) closeTask(ctx context.Context, taskID string) error {
	now := e.cfg.Now()
	_, err := e.st.SetTaskState(ctx, store.TaskStateParams{TaskID: taskID, State: task.StateClosed, Anchor: now, Now: now})
	if err != nil && !errors.Is(err, task.ErrNotFound) {
		return fmt.Errorf("close schedule task %s: %w", taskID, err)
	}
	e.cfg.Wake()
	return nil
}

// checkScheduleTask refuses a fire of a schedule task of flowID that is
// not the current version's (the flow was edited or deleted, and closing
// that task did not happen or has not reached the node that armed it),
// closing it. Fires of other tasks pass.
func (e *Engine) checkScheduleTask(ctx context.Context, flowID, taskID string) error {
	if !strings.HasPrefix(taskID, scheduleTaskPrefix(flowID)) {
		return nil
	}
	f, err := e.st.GetFlow(ctx, flowID)
	switch {
	case err == nil && f.Schedule != "" && ScheduleTaskID(f) == taskID:
		return nil
	case err != nil && !errors.Is(err, task.ErrNotFound):
		return fmt.Errorf("start flow %s: %w", flowID, err)
	}
	if err := e.closeTask(ctx, taskID); err != nil {
		e.logger.WarnContext(ctx, "close stale schedule task", "task_id", taskID, "error", err)
	}
	return task.Permanent(fmt.Errorf("task %s is the schedule of an older version of flow %s: %w", taskID, flowID, task.ErrConflict))
}
