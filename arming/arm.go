package arming

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"cronsheet/fire"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// ArmBatch arms each of ts as Arm does, with the store work of the batch
// shared: one read of the ledger's last slots, one of the unfinished runs,
// and one transaction of the tasks' statuses (falling back to one per task
// when a task of the batch is gone). It returns one error per task, nil for a
// task armed.
func (a *Armer) ArmBatch(ctx context.Context, ts []*task.Task) []error {
	errs := make([]error, len(ts))
	if len(ts) == 0 {
		return errs
	}
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.TaskID
	}
	fail := func(err error) []error {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	lasts, err := a.store.LastSlots(ctx, ids)
	if err != nil {
		return fail(fmt.Errorf("last slots: %w", err))
	}
	unfinished, err := a.store.UnfinishedRunsOf(ctx, ids)
	if err != nil {
		return fail(fmt.Errorf("unfinished runs: %w", err))
	}
	read := time.Now() // when the runs were read, for ResumeRuns' view of the nodes

	steps := make([]armStep, len(ts))
	var statuses []store.TaskStatusParams
	var of []int // of[k]: the task of statuses[k]
	for i, t := range ts {
		steps[i], errs[i] = a.prepare(ctx, t, lasts[t.TaskID], unfinished[t.TaskID], read)
		if errs[i] == nil {
			statuses = append(statuses, steps[i].status)
			of = append(of, i)
		}
	}
	statusErrs := a.storeStatuses(ctx, statuses)
	a.finish(ts, steps, of, statusErrs, errs)
	return errs
}

// storeStatuses stores the statuses of an arming batch and returns one
// error per status. It writes them in transactions of armStatusChunk: one
// transaction of thousands holds the store's one writer for seconds, and
// the fires and outcomes due meanwhile wait behind it.
func (a *Armer) storeStatuses(ctx context.Context, statuses []store.TaskStatusParams) []error {
	statusErrs := make([]error, len(statuses))
	for start := 0; start < len(statuses); start += armStatusChunk {
		chunk := statuses[start:min(start+armStatusChunk, len(statuses))]
		switch err := a.store.SetTaskStatuses(ctx, chunk); {
		case errors.Is(err, task.ErrNotFound):
			// A task of the chunk was deleted meanwhile: each on its own,
			// so the others still arm.
			for k, p := range chunk {
				statusErrs[start+k] = a.store.SetTaskStatus(ctx, p)
			}
		case err != nil:
			// The store is out or slow: one write per task would only add
			// to its load. None of the chunk is armed; reconcile releases
			// them, publish retries.
			for k := range chunk {
				statusErrs[start+k] = err
			}
		}
	}
	return statusErrs
}

// finish completes the arming of the batch ts once their statuses are
// stored (statusErrs[k] is the outcome of the status of ts[of[k]]): it
// fires each task's missed slots and schedules its next one, and sets
// errs[i] for each task of ts left unarmed. The missed slots fire each
// task's in order, the tasks concurrently, so their ledger records share
// group commits (one after another, each late task of a batch takes a
// commit of its own and the patrol pass falls behind the tasks it claims
// next); finish returns when they have fired.
//
// A task with missed slots gets its next slot scheduled only once they
// are all in the ledger: a replayed fire that fails disarms the task and
// ends its replay (replayMissed), and the next arming replays from the
// ledger's last slot, so from the failed one on; a later slot fired
// meanwhile would have moved the ledger's last slot past it.
func (a *Armer) finish(ts []*task.Task, steps []armStep, of []int, statusErrs, errs []error) {
	var missedFires sync.WaitGroup
	defer missedFires.Wait()
	for k, i := range of {
		st := steps[i]
		if statusErrs[k] != nil {
			// Not armed after all (an entry without a gocron job would
			// look armed to reconcile and never fire): reconcile releases
			// the claim and publish arms it again.
			if st.entry != nil {
				a.disarmGen(ts[i].TaskID, st.entry.gen)
			}
			errs[i] = statusErrs[k]
			continue
		}
		if len(st.missed) == 0 {
			errs[i] = a.armNext(ts[i].TaskID, st)
			continue
		}
		missedFires.Go(func() {
			if a.replayMissed(st) {
				errs[i] = a.armNext(ts[i].TaskID, st)
			}
		})
	}
}

// replayMissed fires st's missed slots in order and reports whether each
// is in the ledger. It stops at the first that is not (its fire failed or
// found the task changed): settle has disarmed the task then, and firing
// the later slots would move the ledger's last slot past that one, which
// the next arming would then never fire nor count as skipped.
func (a *Armer) replayMissed(st armStep) bool {
	for _, m := range st.missed {
		if !a.fire(st.entry, st.armed, m.slot, st.missedType, m.next) {
			return false
		}
	}
	return true
}

// armNext schedules st's next slot, if it has one; a task it cannot
// schedule is disarmed (reconcile releases the claim, publish retries).
func (a *Armer) armNext(taskID string, st armStep) error {
	if st.next.IsZero() {
		return nil
	}
	if err := a.schedule(st.entry, st.next); err != nil {
		a.disarmGen(taskID, st.entry.gen)
		return err
	}
	if a.armHook != nil {
		a.armHook(taskID)
	}
	return nil
}

// armStatusChunk bounds the statuses of one arming transaction.
const armStatusChunk = 500

// armStep is what arming one task leaves to do once the batch's
// statuses are stored: its status, the missed slots to fire (in order,
// as missedType) and the slot to schedule (zero: none).
type armStep struct {
	status     store.TaskStatusParams
	entry      *armedTask
	armed      *task.Task // the task as armed, which the missed slots fire as
	missed     []missedFire
	missedType task.TriggerType
	next       time.Time
}

// missedFire is one missed slot to fire, and the next fire it reports.
type missedFire struct{ slot, next time.Time }

// prepare arms t in memory, with last (its ledger's last scheduled slot)
// and unfinished (its unfinished runs, read by runsRead) read for the
// batch: it registers t's entry and resumes its runs, and returns the
// status to store, and the missed slots to fire and the next slot to
// schedule once it is stored.
func (a *Armer) prepare(ctx context.Context, t *task.Task, last time.Time, unfinished []*task.Run, runsRead time.Time) (armStep, error) {
	if triggeredOnly(t) {
		return a.holdTriggered(ctx, t, unfinished, runsRead)
	}
	sched, err := mapping.Schedule(t)
	if errors.Is(err, task.ErrInvalid) {
		// It can never be armed (a row's mapping refuses such schedules;
		// this one came from elsewhere): held here without a schedule and
		// flagged once, rather than refused, released and claimed again
		// on every pass. An edit re-arms it.
		a.logger.ErrorContext(ctx, "task cannot be scheduled; held without a schedule until edited",
			"task_id", t.TaskID, "error", err)
		a.mu.Lock()
		a.gen++
		a.removeJobLocked(t.TaskID)
		a.jobs[t.TaskID] = newArmedTask(t, fire.Slots{}, a.gen)
		a.mu.Unlock()
		return armStep{status: store.TaskStatusParams{TaskID: t.TaskID, LastStatus: "unschedulable", SetNextFire: true}}, nil
	}
	if err != nil {
		return armStep{}, fmt.Errorf("parse schedule of %s: %w", t.TaskID, err)
	}
	slots := fire.NewSlots(t, sched)
	plan := fire.MakePlan(slots, t.Misfire, last, a.now())
	pending, err := a.firer.ResumeRuns(ctx, t, unfinished, runsRead)
	if err != nil {
		return armStep{}, err
	}

	a.mu.Lock()
	a.gen++
	e := newArmedTask(t, slots, a.gen)
	a.removeJobLocked(t.TaskID)
	a.jobs[t.TaskID] = e
	a.mu.Unlock()

	if t.State != task.StateRunning {
		// Stopped or closed: held here, its unfinished runs resumed, but
		// no slot fires and no queued run is delivered. A state change
		// releases the claim, so it comes back through Arm under its new
		// state at once.
		a.firer.EndQueued(ctx, t.TaskID)
		return armStep{status: store.TaskStatusParams{TaskID: t.TaskID, SetNextFire: true}, entry: e}, nil
	}
	if plan.Skipped > 0 {
		a.logger.InfoContext(ctx, "missed slots skipped", "task_id", t.TaskID, "skipped", plan.Skipped, "policy", t.Misfire)
	}
	if len(plan.Missed) > 0 || plan.Skipped > 0 {
		// Slots were missed while no node held the task: the first of
		// them is late whatever the misfire policy does with it now. A
		// task that never fired missed its very first slot, the one
		// after its anchor (or start); a once task has that one slot
		// (MakePlan counts it fired only when the ledger holds it).
		// AlertAbsent alerts only past the task's absence bound, so a
		// task armed moments after its slot does not.
		from := last
		if slots.Once() {
			from = time.Time{}
		}
		if _, err := a.firer.AlertAbsent(ctx, t, slots.Next(from)); err != nil {
			a.logger.WarnContext(ctx, "absence alert", "task_id", t.TaskID, "error", err)
		}
	}
	// A delayed job's one instant is its schedule, however late it is
	// armed (submitted with no delay, unblocked after its time).
	step := armStep{entry: e, armed: t, missedType: task.TriggerMisfire}
	if t.Job != nil && t.CronPara == "" {
		step.missedType = task.TriggerSchedule
	}
	for i, slot := range plan.Missed {
		next := plan.Next
		if i+1 < len(plan.Missed) {
			next = plan.Missed[i+1]
		}
		step.missed = append(step.missed, missedFire{slot: slot, next: next})
	}
	if plan.Next.IsZero() {
		// The schedule has no slot left. The task is done when its last
		// run is final: now, when no run is unfinished; else the Firer
		// marks it done as that run finishes (usesUpSchedule), and the
		// task stays armed here, without a job, until then.
		done := len(plan.Missed) == 0 && pending == 0
		step.status = store.TaskStatusParams{TaskID: t.TaskID, Done: done, SetNextFire: true}
		return step, nil
	}
	step.status = store.TaskStatusParams{TaskID: t.TaskID, NextFire: plan.Next, SetNextFire: true}
	step.next = plan.Next
	return step, nil
}
