package fire

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// TriggerParams are the arguments of Firer.Trigger.
type TriggerParams struct {
	TaskID string
	// At is the instant of the trigger; the slot is At truncated to the
	// millisecond.
	At time.Time
	// Type is the trigger type; default task.TriggerManual. Scheduled types
	// (schedule, misfire) are refused: those come from the armer.
	Type task.TriggerType
	// Params are one-off params for this trigger only, over the task's.
	Params map[string]string
}

// Trigger fires a task once now, by hand (or by a program or another
// task): one run per target, each with its own trigger id and record. It
// does not need this node's claim (any node's API may trigger). The states
// decide per target (task.Admit): a stopped task fires, a closed one is
// recorded rejected, as is a preset target; a paused target takes it. The
// ledger key (task_id, slot, target) keeps it exactly-once per instant.
// The runs are recorded like a scheduled fire's (the row shows it as its
// last fire, its next fire is left alone) and delivered in the background;
// Trigger returns them as recorded, rejected ones included.
//
// Errors: task.ErrNotFound when the task does not exist; task.ErrInvalid
// for bad params or a scheduled trigger type; task.ErrConflict when it is
// disabled or done (unless it is a backfill, which re-runs a finished or
// cancelled task on purpose), or when the instant was already fired;
// context.Canceled after Shutdown.
func (f *Firer) Trigger(ctx context.Context, p TriggerParams) ([]*task.Run, error) {
	f.mu.Lock()
	closed := f.closed
	f.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("trigger %s: firer is shut down: %w", p.TaskID, context.Canceled)
	}
	tt := cmp.Or(p.Type, task.TriggerManual)
	if tt.Scheduled() {
		return nil, fmt.Errorf("trigger %s: %w", p.TaskID, task.Invalid("trigger_type", "%s triggers come from the schedule", tt))
	}
	if err := task.ValidParams("params", p.Params); err != nil {
		return nil, fmt.Errorf("trigger %s: %w", p.TaskID, err)
	}
	t, err := f.getTask(ctx, p.TaskID)
	if err != nil {
		return nil, fmt.Errorf("trigger %s: %w", p.TaskID, err)
	}
	routed := t
	if tt == task.TriggerBackfill {
		// A backfill re-runs a finished, dead or cancelled task on purpose:
		// its own state does not stop it (its targets' states still do).
		copied := *t
		copied.State = task.StateRunning
		routed = &copied
	} else if why := notTriggerable(t); why != "" {
		return nil, fmt.Errorf("task %s is %s and cannot be triggered: %w", p.TaskID, why, task.ErrConflict)
	}
	slot := p.At.Truncate(time.Millisecond)
	routes, err := f.routes(ctx, routed, slot, tt, p.Params)
	if err != nil {
		return nil, err
	}
	results, recorded := f.record(records(routes, store.TaskStatusParams{TaskID: t.TaskID, LastFire: slot}))
	defer recorded()
	var runs []*task.Run
	for i, res := range results {
		switch {
		case errors.Is(res.Err, task.ErrNotFound):
			return nil, fmt.Errorf("trigger %s: task was deleted meanwhile: %w", p.TaskID, res.Err)
		case res.Err != nil:
			return nil, fmt.Errorf("record %s trigger of %s at %s: %w", tt, p.TaskID, slot.Format(time.RFC3339Nano), res.Err)
		case res.Inserted:
			run := routes[i].run
			answer := *run // deliveries change run; the caller gets it as recorded
			runs = append(runs, &answer)
			f.observeFire(t, routes[i].target, run)
			if run.State == task.RunRunning {
				f.deliverAsync(t, routes[i].target, run, true)
			}
		}
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("task %s was already fired at %s: %w", p.TaskID, slot.Format(time.RFC3339Nano), task.ErrConflict)
	}
	return runs, nil
}

// notTriggerable says why t may not fire by hand at all ("" when it may;
// a closed task is recorded as rejected instead).
func notTriggerable(t *task.Task) string {
	switch {
	case t.IsEnable != 1:
		return "disabled"
	case t.IsDone == 1:
		return "done"
	}
	return ""
}
