package fire

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// route is one run of a trigger and where it goes.
type route struct {
	run    *task.Run
	target *task.Target // nil: the task's own channel (a task without targets)
}

// routes makes the runs of one trigger of t: one per target the task names
// (or one for its own channel when it names none), each with its own
// trigger id. A run the states refuse (task.Admit) is recorded rejected
// with the reason; a run to a target that does not exist is recorded dead.
// The others are running, attempt 1, to be delivered.
func (f *Firer) routes(ctx context.Context, t *task.Task, slot time.Time, tt task.TriggerType, params map[string]string) ([]route, error) {
	now := f.now()
	newRun := func(target string) *task.Run {
		return &task.Run{
			TriggerID:   NewTriggerID(),
			TaskID:      t.TaskID,
			Slot:        slot,
			Target:      target,
			TriggerType: tt,
			State:       task.RunRunning,
			Attempt:     1,
			Node:        f.cfg.Node,
			Fence:       1,
			FiredAt:     now,
			Deadline:    now.Add(ttlOf(t)),
			Params:      params,
		}
	}
	end := func(r *task.Run, state task.RunState, why string) {
		r.State, r.Error, r.FinishedAt, r.Attempt, r.Deadline = state, why, now, 0, time.Time{}
	}
	if t.Job != nil {
		// A job fires to its own inline target, always running.
		tg := t.Job.Target()
		r := newRun(tg.ID)
		if why := task.Admit(t.State, tg.State, tt); why != "" {
			end(r, task.RunRejected, why)
		}
		return []route{{run: r, target: tg}}, nil
	}
	if len(t.Targets) == 0 {
		r := newRun(string(t.TaskType))
		if why := task.Admit(t.State, task.TargetRunning, tt); why != "" {
			end(r, task.RunRejected, why)
		}
		return []route{{run: r}}, nil
	}
	out := make([]route, 0, len(t.Targets))
	for _, id := range t.Targets {
		r := newRun(id)
		tg, err := f.getTarget(ctx, id)
		switch {
		case errors.Is(err, task.ErrNotFound):
			end(r, task.RunDead, fmt.Sprintf("target %q not found", id))
		case err != nil:
			return nil, fmt.Errorf("read target %s of task %s: %w", id, t.TaskID, err)
		default:
			if why := task.Admit(t.State, tg.State, tt); why != "" {
				end(r, task.RunRejected, why)
			}
		}
		out = append(out, route{run: r, target: tg})
	}
	return out, nil
}

// records returns the ledger records of routes, all with the same task
// status: the trigger's instant, and routes' state (firedStatus).
func records(routes []route, status store.TaskStatusParams) []store.FireRecord {
	return recordsOf(routes, firedStatus(routes, status))
}

// firedStatus is status with routes' state as last status: running when
// any run is being delivered, else the state of the first run (rejected,
// dead).
func firedStatus(routes []route, status store.TaskStatusParams) store.TaskStatusParams {
	status.LastStatus = string(routes[0].run.State)
	if slices.ContainsFunc(routes, func(r route) bool { return r.run.State == task.RunRunning }) {
		status.LastStatus = string(task.RunRunning)
	}
	return status
}

// recordsOf returns the ledger records of routes, each with status.
func recordsOf(routes []route, status store.TaskStatusParams) []store.FireRecord {
	recs := make([]store.FireRecord, len(routes))
	for i, r := range routes {
		recs[i] = store.FireRecord{Run: r.run, Status: status}
	}
	return recs
}

// resumeTarget finds where an unfinished run goes: nil for the task's own
// channel, else its target; an error wrapping task.ErrNotFound when the
// target was deleted.
func (f *Firer) resumeTarget(ctx context.Context, t *task.Task, r *task.Run) (*task.Target, error) {
	if t.Job != nil && r.Target == task.JobTargetID {
		return t.Job.Target(), nil
	}
	id, isAlert := alertTargetID(r.Target)
	if !isAlert && (len(t.Targets) == 0 && r.Target == string(t.TaskType) || task.Channel(r.Target).Valid()) {
		return nil, nil
	}
	tg, err := f.getTarget(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("read target %s of run %s: %w", r.Target, r.TriggerID, err)
	}
	return tg, nil
}

func (f *Firer) getTarget(ctx context.Context, id string) (*task.Target, error) {
	if tg := task.FlowTarget(id); tg != nil {
		return tg, nil // "flow:<id>": a start_flow made on the spot, never stored
	}
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	defer cancel()
	return f.store.GetTarget(sctx, id)
}
