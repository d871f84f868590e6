package fire

import (
	"context"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// deliverAsync starts delivering run to tg (nil: the task's own channel)
// unless this process already is. stored says the run is in the ledger as
// it is (a fresh fire).
func (f *Firer) deliverAsync(t *task.Task, tg *task.Target, run *task.Run, stored bool) bool {
	if !f.reserve(run) {
		return false
	}
	f.start(t, tg, run, stored)
	return true
}

// deliverRechecked is deliverAsync for a fresh run whose record was slow:
// its delivery first reads the task again, as a queued run's turn does
// (heldBack), and a task switched off, stopped, closed or deleted
// meanwhile ends the run cancelled with the reason, undelivered. A task
// that cannot be read is delivered to, as the fire's own check allowed.
func (f *Firer) deliverRechecked(t *task.Task, tg *task.Target, run *task.Run) bool {
	if !f.reserve(run) {
		return false
	}
	go func() {
		defer f.release(run)
		ctx := f.workCtx
		now, why, err := f.heldBack(ctx, run.TaskID, whileRecorded)
		if err == nil && why != "" {
			f.logger.InfoContext(ctx, "fired run not delivered", "task_id", run.TaskID, "trigger_id", run.TriggerID, "why", why)
			if now == nil {
				now = &task.Task{TaskID: run.TaskID}
			}
			_ = f.finish(ctx, now, tg, run, task.RunCancelled, why) // logged
			return
		}
		f.deliver(ctx, t, tg, run, true)
	}()
	return true
}

// reserve marks a run as being delivered by this process; false when it
// already is, or the Firer is shut down. Every reserve is matched by one
// release (start does it when the delivery ends).
func (f *Firer) reserve(r *task.Run) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.inflight[r.TriggerID] {
		return false
	}
	f.inflight[r.TriggerID] = true
	if overlaps(r) {
		f.active[r.TaskID]++
		f.counted[r.TriggerID] = true
	}
	f.wg.Add(1)
	return true
}

// reserveIdle is reserve for a run read from the store: false also when
// this process is recording the run or holds it queued.
func (f *Firer) reserveIdle(r *task.Run) bool {
	f.mu.Lock()
	busy := f.recording[r.TriggerID] || f.waiting[r.TriggerID]
	f.mu.Unlock()
	// Not racy: a run leaves recording only once it is reserved or queued.
	return !busy && f.reserve(r)
}

// record writes recs through the group commit with their runs marked as
// being recorded here; call done once each inserted run is reserved
// (deliverAsync) or queued.
func (f *Firer) record(recs []store.FireRecord) (results []store.FireResult, done func()) {
	f.mu.Lock()
	for _, rec := range recs {
		f.recording[rec.Run.TriggerID] = true
	}
	f.mu.Unlock()
	return f.recordAll(recs), func() {
		f.mu.Lock()
		for _, rec := range recs {
			delete(f.recording, rec.Run.TriggerID)
		}
		f.mu.Unlock()
	}
}

// release ends a reservation. The last delivery of a task to end starts
// the task's oldest queued slot (overlap: queue).
func (f *Firer) release(r *task.Run) {
	f.mu.Lock()
	delete(f.inflight, r.TriggerID)
	f.mu.Unlock()
	f.deactivate(r)
	f.wg.Done()
}

// deactivate stops counting r as a delivery in progress of its task for
// the overlap policy, once: as soon as its outcome is stored (finish), or
// when its delivery ends. The work after the outcome (callbacks, alerts)
// then no longer makes the task's next slot look overlapping. The last
// one of a task starts its oldest queued slot (overlap: queue).
func (f *Firer) deactivate(r *task.Run) {
	f.mu.Lock()
	var next []queuedRun
	if f.counted[r.TriggerID] {
		delete(f.counted, r.TriggerID)
		if f.active[r.TaskID]--; f.active[r.TaskID] <= 0 {
			delete(f.active, r.TaskID)
			next = f.popQueuedLocked(r.TaskID)
		}
	}
	f.mu.Unlock()
	for _, q := range next {
		f.deliverAsync(q.t, q.target, q.run, false)
	}
}

// overlaps reports whether r counts as a delivery of its task for the
// overlap policy: an alert about the task does not.
func overlaps(r *task.Run) bool { return r.TriggerType != task.TriggerAlert }

// unfinishedInLedger reports whether the ledger holds an unfinished run of
// taskID (not an alert): the check behind busy, since a delivery here is
// still counted for a moment after its outcome is stored. A read error
// counts as unfinished (the overlap policy then applies, as before).
func (f *Firer) unfinishedInLedger(ctx context.Context, taskID string) bool {
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	defer cancel()
	runs, err := f.store.UnfinishedRuns(sctx, taskID)
	if err != nil {
		return true
	}
	for _, r := range runs {
		if overlaps(r) {
			return true
		}
	}
	return false
}

// busy reports whether taskID has deliveries in progress here, or slots
// waiting for them.
// Busy reports whether a run of taskID is being delivered or queued here.
func (f *Firer) Busy(taskID string) bool { return f.busy(taskID) }

func (f *Firer) busy(taskID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.active[taskID] > 0 || len(f.queued[taskID]) > 0
}

// enqueue queues one slot's runs (overlap: queue) behind the task's
// deliveries in progress, or starts them when those ended meanwhile.
func (f *Firer) enqueue(slot []queuedRun) {
	f.mu.Lock()
	next := f.enqueueLocked(slot)
	f.mu.Unlock()
	for _, q := range next {
		f.deliverAsync(q.t, q.target, q.run, false)
	}
}

// enqueueLocked queues slot (f.mu held) and returns the runs to start now:
// the task's oldest queued slot when no delivery of it is in progress.
func (f *Firer) enqueueLocked(slot []queuedRun) []queuedRun {
	id := slot[0].run.TaskID
	f.queued[id] = append(f.queued[id], slot)
	for _, q := range slot {
		f.waiting[q.run.TriggerID] = true
	}
	if f.active[id] == 0 {
		return f.popQueuedLocked(id)
	}
	return nil
}

// queueReserved hands a run this process reserved (rescue) over to its
// task's queue, in one step so that no Resume finds it neither reserved
// nor queued: the reservation ends without starting a queued slot, and
// the run waits as a slot queued at its fire does (enqueue).
func (f *Firer) queueReserved(q queuedRun) {
	id, taskID := q.run.TriggerID, q.run.TaskID
	f.mu.Lock()
	delete(f.inflight, id)
	if f.counted[id] {
		delete(f.counted, id)
		if f.active[taskID]--; f.active[taskID] <= 0 {
			delete(f.active, taskID)
		}
	}
	next := f.enqueueLocked([]queuedRun{q})
	f.mu.Unlock()
	f.wg.Done()
	for _, n := range next {
		f.deliverAsync(n.t, n.target, n.run, false)
	}
}

// popQueuedLocked takes the oldest queued slot of taskID (f.mu held).
func (f *Firer) popQueuedLocked(taskID string) []queuedRun {
	q := f.queued[taskID]
	if len(q) == 0 {
		return nil
	}
	next := q[0]
	for _, r := range next {
		delete(f.waiting, r.run.TriggerID)
	}
	if len(q) == 1 {
		delete(f.queued, taskID)
	} else {
		f.queued[taskID] = q[1:]
	}
	return next
}

// OverlapOf is the overlap policy a fire of trigger follows for t. A
// missed slot replayed at arming (misfire) is never skipped for overlap:
// the misfire policy chose to deliver it, so under skip it queues as
// under queue, one at a time behind the runs before it, in slot order.
func OverlapOf(t *task.Task, trigger task.TriggerType) task.Overlap {
	o := task.OverlapOf(t)
	if trigger == task.TriggerMisfire && o == task.OverlapSkip {
		return task.OverlapQueue
	}
	return o
}

// queueFull reports whether a scheduled slot of taskID fired now finds
// the task's queue full (overlap: queue): one slot already waits here
// behind the run in progress. The queue holds one slot, as cron holds
// none past the running job ("skip if running"): deliveries slower than
// the period would otherwise queue slots without bound, in memory and in
// the ledger, each delivered later and later. A missed slot replayed at
// arming (misfire) never finds it full: the misfire policy chose to
// deliver each of them, in order. The armer fires a task's slots one at
// a time, so two fires of a task do not both find the queue empty.
func (f *Firer) queueFull(taskID string, trigger task.TriggerType) bool {
	if trigger == task.TriggerMisfire {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queued[taskID]) > 0
}

// holdForOverlap applies a busy task's overlap policy to the runs of a
// scheduled fire about to be recorded: skip ends each run that would be
// delivered as skipped, with the reason; queue records it pending, to be
// delivered after the runs before it, or, when the queue is full
// (queueFull), skipped with the reason. A skipped run stays in the
// ledger, which counts the slots skipped per task.
func holdForOverlap(routes []route, policy task.Overlap, full bool, now time.Time) {
	for _, r := range routes {
		if r.run.State != task.RunRunning {
			continue
		}
		switch {
		case policy == task.OverlapSkip:
			skip(r.run, "the previous run was still in progress (overlap: skip)", now)
		case policy == task.OverlapQueue && full:
			skip(r.run, "a slot was already waiting for the run in progress (overlap: queue holds one)", now)
		case policy == task.OverlapQueue:
			r.run.State, r.run.Deadline = task.RunPending, time.Time{}
		}
	}
}

// skip makes run, about to be recorded, skipped for why.
func skip(run *task.Run, why string, now time.Time) {
	run.State, run.Attempt, run.FinishedAt = task.RunSkipped, 0, now
	run.Error = why
	run.Deadline = time.Time{}
}

// EndQueued ends the runs of taskID queued here when the task may no
// longer be delivered to (heldBack: gone, switched off, stopped, closed):
// each ends cancelled with the reason at once, rather than when the
// delivery before it ends. A task that may still be delivered to keeps
// its queue, as does one that cannot be read. It returns how many runs it
// ended.
func (f *Firer) EndQueued(ctx context.Context, taskID string) int {
	if !f.hasQueued(taskID) {
		return 0
	}
	t, why, err := f.heldBack(ctx, taskID, whileQueued)
	if err != nil || why == "" {
		return 0
	}
	if t == nil {
		t = &task.Task{TaskID: taskID}
	}
	n := 0
	for _, q := range f.takeQueued(taskID) {
		if f.finish(ctx, t, q.target, q.run, task.RunCancelled, why) == nil {
			n++
		}
		f.release(q.run)
	}
	return n
}

// hasQueued reports whether runs of taskID are queued here.
func (f *Firer) hasQueued(taskID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queued[taskID]) > 0
}

// takeQueued takes all the queued runs of taskID out of its queue, each
// reserved (in flight here, not counted for the overlap policy) in the
// same step, so that no Resume finds one neither queued nor reserved.
// Each is to be released (release) once ended. After Shutdown it takes
// none.
func (f *Firer) takeQueued(taskID string) []queuedRun {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil // left pending, for whoever resumes the task next
	}
	var out []queuedRun
	for _, slot := range f.queued[taskID] {
		for _, q := range slot {
			delete(f.waiting, q.run.TriggerID)
			f.inflight[q.run.TriggerID] = true
			f.wg.Add(1)
			out = append(out, q)
		}
	}
	delete(f.queued, taskID)
	return out
}
