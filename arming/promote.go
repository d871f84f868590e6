package arming

import (
	"container/heap"
	"context"
	"fmt"
	"time"

	"cronsheet/fire"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// Promote moves the parked tasks that have entered the window into their
// buckets: it reads them back from the store in batches (their task and
// schedule were dropped when parked) and returns how many it promoted. A
// task whose version changed meanwhile, or that is gone, is disarmed:
// reconcile releases its claim and publish arms it afresh. When the store
// cannot answer, the tasks stay parked and the next call tries again; a
// slot that passes meanwhile fires late, when promoted, never dropped.
func (a *Armer) Promote(ctx context.Context) (int, error) {
	promoted := 0
	for {
		a.mu.Lock()
		horizon := a.now().Add(a.window)
		var batch []*armedTask
		for len(a.parked) > 0 && len(batch) < store.MaxStatusBatch && !a.parked[0].due.After(horizon) {
			e := heap.Pop(&a.parked).(*armedTask)
			batch = append(batch, e) // due kept: it is the slot to schedule
			e.parkIdx = -2           // being promoted: neither parked nor in a bucket
		}
		a.mu.Unlock()
		if len(batch) == 0 {
			return promoted, nil
		}
		ids := make([]string, len(batch))
		for i, e := range batch {
			ids[i] = e.id
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		tasks, err := a.store.GetTasks(rctx, ids)
		cancel()
		if err != nil {
			a.repark(batch)
			return promoted, fmt.Errorf("promote %d parked tasks: %w", len(batch), err)
		}
		byID := make(map[string]*task.Task, len(tasks))
		for _, t := range tasks {
			byID[t.TaskID] = t
		}
		for _, e := range batch {
			if a.promote(e, byID[e.id]) {
				promoted++
			}
		}
	}
}

// promote schedules the parked e with t, its task as read now; it reports
// whether e is in its bucket.
func (a *Armer) promote(e *armedTask, t *task.Task) bool {
	a.mu.Lock()
	slot := e.due
	e.parkIdx, e.due = -1, time.Time{}
	current := a.jobs[e.id] == e
	a.mu.Unlock()
	if !current {
		return false // disarmed or re-armed while parked
	}
	if t == nil || t.Version != e.version {
		a.disarmGen(e.id, e.gen) // deleted or edited: armed afresh
		return false
	}
	sched, err := mapping.Schedule(t)
	if err != nil {
		a.disarmGen(e.id, e.gen)
		return false
	}
	a.mu.Lock()
	e.task, e.slots = t, fire.NewSlots(t, sched)
	a.mu.Unlock()
	if err := a.schedule(e, slot); err != nil {
		a.logger.Error("schedule a promoted task", "task_id", e.id, "error", err)
		a.disarmGen(e.id, e.gen)
		return false
	}
	return true
}

// Shed hands back to the store the parked tasks due more than
// two windows from now (store.Tasks.ParkTasks, in batches), each
// to be claimed again a window before its slot; it returns how many. A
// task with a run delivering or queued here stays (its overlap policy is
// this node's to apply). A task the store did not park (edited or lost
// meanwhile) stays armed: reconcile and publish sort it out as for any
// other. When the store cannot answer, the batch stays parked here.
func (a *Armer) Shed(ctx context.Context) (int, error) {
	if a.window <= 0 || a.node == "" {
		return 0, nil
	}
	shed := 0
	for {
		a.mu.Lock()
		now := a.now()
		// Beyond two windows: a task due sooner is promoted soon, and is
		// not worth a release and a claim.
		cutoff := now.Add(2 * a.window)
		var batch []*armedTask
		for _, e := range a.parked {
			if len(batch) == armStatusChunk {
				break
			}
			if e.due.After(cutoff) {
				batch = append(batch, e)
			}
		}
		for _, e := range batch {
			heap.Remove(&a.parked, e.parkIdx)
			e.parkIdx = -3 // being shed: neither parked nor in a bucket
		}
		a.mu.Unlock()
		if len(batch) == 0 {
			return shed, nil
		}
		var ps []store.ParkParams
		for _, e := range batch {
			if !a.firer.Busy(e.id) { // outside a.mu: the armer never holds it over the firer's lock
				ps = append(ps, store.ParkParams{TaskID: e.id, Version: e.version, ArmAt: e.due.Add(-a.window)})
			}
		}
		var parked []string
		var err error
		if len(ps) > 0 {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			parked, err = a.store.ParkTasks(rctx, a.node, ps)
			cancel()
		}
		done := make(map[string]bool, len(parked))
		for _, id := range parked {
			done[id] = true
		}
		a.mu.Lock()
		for _, e := range batch {
			switch {
			case a.jobs[e.id] != e || e.parkIdx != -3:
				// Disarmed or re-armed meanwhile: that arming stands.
			case done[e.id]:
				e.parkIdx = -1
				delete(a.jobs, e.id)
				shed++
			default:
				heap.Push(&a.parked, e)
			}
		}
		a.mu.Unlock()
		if err != nil {
			return shed, fmt.Errorf("hand back %d parked tasks: %w", len(batch), err)
		}
		if len(parked) == 0 {
			return shed, nil // none of this batch could be handed back: try again next time
		}
	}
}

// repark puts back the tasks of a promotion the store did not answer.
func (a *Armer) repark(batch []*armedTask) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range batch {
		if a.jobs[e.id] == e && e.parkIdx == -2 {
			heap.Push(&a.parked, e)
		}
	}
}
