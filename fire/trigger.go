package fire

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// Trigger fires taskID once now, by hand: the slot is at, truncated to the
// millisecond, and the run's trigger type is task.TriggerManual. It does not
// need this node's claim (any node's API may trigger), and a stopped task
// fires too (DESIGN: stopped fires only on manual trigger). The ledger key
// (task_id, slot, target) keeps it exactly-once per instant. The run is
// recorded like a scheduled fire (the row shows it as its last fire, its
// next fire is left alone) and delivered in the background; Trigger returns
// it as recorded.
//
// Errors: task.ErrNotFound when the task does not exist; task.ErrConflict
// when it is disabled, done or closed, or when the instant was already
// fired; context.Canceled after Shutdown.
func (f *Firer) Trigger(ctx context.Context, taskID string, at time.Time) (*task.Run, error) {
	f.mu.Lock()
	closed := f.closed
	f.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("trigger %s: firer is shut down: %w", taskID, context.Canceled)
	}
	t, err := f.getTask(ctx, taskID)
	if err != nil {
		return nil, fmt.Errorf("trigger %s: %w", taskID, err)
	}
	if why := notTriggerable(t); why != "" {
		return nil, fmt.Errorf("task %s is %s and cannot be triggered: %w", taskID, why, task.ErrConflict)
	}
	slot := at.Truncate(time.Millisecond)
	run := &task.Run{
		TriggerID:   newTriggerID(),
		TaskID:      t.TaskID,
		Slot:        slot,
		Target:      string(t.TaskType),
		TriggerType: task.TriggerManual,
		State:       task.RunRunning,
		Attempt:     1,
		Node:        f.cfg.Node,
		FiredAt:     f.now(),
	}
	res := f.rec.record(store.FireRecord{Run: run, Status: store.TaskStatusParams{
		TaskID: t.TaskID, LastFire: slot, LastStatus: string(task.RunRunning),
	}})
	if errors.Is(res.Err, task.ErrNotFound) {
		return nil, fmt.Errorf("trigger %s: task was deleted meanwhile: %w", taskID, res.Err)
	}
	if res.Err != nil {
		return nil, fmt.Errorf("record manual fire of %s at %s: %w", taskID, slot.Format(time.RFC3339Nano), res.Err)
	}
	if !res.Inserted {
		return nil, fmt.Errorf("task %s was already fired at %s: %w", taskID, slot.Format(time.RFC3339Nano), task.ErrConflict)
	}
	answer := *run // deliveries change run; the caller gets it as recorded
	f.deliverAsync(t, run, true)
	return &answer, nil
}

// notTriggerable says why t may not fire by hand ("" when it may).
func notTriggerable(t *task.Task) string {
	switch {
	case t.IsEnable != 1:
		return "disabled"
	case t.IsDone == 1:
		return "done"
	case t.State == task.StateClosed:
		return "closed"
	}
	return ""
}
