package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"

	"cronsheet/fire"
	"cronsheet/mapping"
	"cronsheet/patrol"
	"cronsheet/store"
	"cronsheet/task"
)

// armStore is what arming needs from storage beyond the Firer's needs.
type armStore interface {
	LastSlot(ctx context.Context, taskID string) (time.Time, error)
	SetTaskStatus(ctx context.Context, p store.TaskStatusParams) error
}

// armer keeps each armed task as one gocron one-time job at its next slot.
// When the job runs it first schedules the following slot, then fires this
// one, so a slow fire never delays the schedule.
//
// A one-time job that has run stays registered in gocron until removed. It
// is not removed as it runs (gocron's WithLimitedRuns tripled the lag of a
// 10k-job burst): Sweep removes run jobs in bulk, outside the burst.
type armer struct {
	logger *slog.Logger
	sched  gocron.Scheduler
	firer  *fire.Firer
	store  armStore
	now    func() time.Time
	// fireHook, when set, receives each fire's lag (slot → job start).
	fireHook func(slot time.Time, lag time.Duration)
	// armHook, when set, is called after a task is armed.
	armHook func(taskID string)
	ctx     context.Context // cancelled at shutdown

	mu   sync.Mutex
	gen  uint64
	jobs map[string]*armedTask
	ran  []uuid.UUID // one-time jobs that have run, for Sweep
}

var _ patrol.Armer = (*armer)(nil)

// armedTask is one task armed here.
type armedTask struct {
	task  *task.Task
	slots fire.Slots
	gen   uint64
	job   uuid.UUID // the pending gocron job; uuid.Nil when none
}

func newArmer(ctx context.Context, logger *slog.Logger, sched gocron.Scheduler, f *fire.Firer, st armStore) *armer {
	return &armer{
		logger: logger.With("component", "armer"),
		sched:  sched,
		firer:  f,
		store:  st,
		now:    time.Now,
		ctx:    ctx,
		jobs:   map[string]*armedTask{},
	}
}

// Arm schedules t here, replacing an older arming of the same task: it fires
// the slots missed while no node held the task (per its misfire policy),
// resumes its unfinished runs, and schedules the next slot. A task that is
// not running (stopped, closed) is held without a schedule: it fires only
// by hand (stopped) or not at all (closed), and shows no next fire.
func (a *armer) Arm(ctx context.Context, t *task.Task) error {
	sched, err := mapping.Schedule(t)
	if err != nil {
		return fmt.Errorf("parse schedule of %s: %w", t.TaskID, err)
	}
	slots := fire.NewSlots(t, sched)
	last, err := a.store.LastSlot(ctx, t.TaskID)
	if err != nil {
		return fmt.Errorf("last slot of %s: %w", t.TaskID, err)
	}
	plan := fire.MakePlan(slots, t.Misfire, last, a.now())
	unfinished, err := a.firer.Resume(ctx, t)
	if err != nil {
		return err
	}

	a.mu.Lock()
	a.gen++
	e := &armedTask{task: t, slots: slots, gen: a.gen}
	a.removeJobLocked(t.TaskID)
	a.jobs[t.TaskID] = e
	a.mu.Unlock()

	if t.State != task.StateRunning {
		// Stopped or closed: held here, its unfinished runs resumed, but
		// no slot fires. A state change releases the claim, so it comes
		// back through Arm under its new state at once.
		return a.store.SetTaskStatus(ctx, store.TaskStatusParams{TaskID: t.TaskID, SetNextFire: true})
	}
	if plan.Skipped > 0 {
		a.logger.InfoContext(ctx, "missed slots skipped", "task_id", t.TaskID, "skipped", plan.Skipped, "policy", t.Misfire)
	}
	// A delayed job's one instant is its schedule, however late it is
	// armed (submitted with no delay, unblocked after its time).
	missed := task.TriggerMisfire
	if t.Job != nil && t.CronPara == "" {
		missed = task.TriggerSchedule
	}
	for i, slot := range plan.Missed {
		next := plan.Next
		if i+1 < len(plan.Missed) {
			next = plan.Missed[i+1]
		}
		a.fire(e, slot, missed, next)
	}
	if plan.Next.IsZero() {
		// The schedule has no slot left. The task is done when its last
		// run is final: now, when no run is unfinished; else the Firer
		// marks it done as that run finishes (usesUpSchedule), and the
		// task stays armed here, without a job, until then.
		done := len(plan.Missed) == 0 && unfinished == 0
		return a.store.SetTaskStatus(ctx, store.TaskStatusParams{TaskID: t.TaskID, Done: done, SetNextFire: true})
	}
	if err := a.store.SetTaskStatus(ctx, store.TaskStatusParams{TaskID: t.TaskID, NextFire: plan.Next, SetNextFire: true}); err != nil {
		// Not armed after all (an entry without a gocron job would look
		// armed to reconcile and never fire): reconcile releases the
		// claim and publish arms it again.
		a.disarmGen(t.TaskID, e.gen)
		return err
	}
	if err := a.schedule(e, plan.Next); err != nil {
		// Not armed after all: reconcile releases the claim, publish retries.
		a.disarmGen(t.TaskID, e.gen)
		return err
	}
	if a.armHook != nil {
		a.armHook(t.TaskID)
	}
	return nil
}

// schedule creates the gocron job for e's slot.
func (a *armer) schedule(e *armedTask, slot time.Time) error {
	start := gocron.OneTimeJobStartDateTime(slot)
	if !slot.After(a.now()) {
		start = gocron.OneTimeJobStartImmediately()
	}
	job, err := a.sched.NewJob(
		gocron.OneTimeJob(start),
		gocron.NewTask(a.onFire, e.task.TaskID, e.gen, slot),
		gocron.WithName(e.task.TaskID),
	)
	if err != nil {
		return fmt.Errorf("schedule %s at %s: %w", e.task.TaskID, slot, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur := a.jobs[e.task.TaskID]; cur != e {
		// Disarmed or re-armed meanwhile: this job must not run.
		_ = a.sched.RemoveJob(job.ID())
		return nil
	}
	e.job = job.ID()
	return nil
}

// onFire is the gocron task of one slot.
func (a *armer) onFire(taskID string, gen uint64, slot time.Time) {
	if d := slot.Sub(a.now()); d > 0 {
		time.Sleep(d) // a fire is never early
	}
	if a.fireHook != nil {
		a.fireHook(slot, a.now().Sub(slot))
	}
	a.mu.Lock()
	e := a.jobs[taskID]
	if e == nil || e.gen != gen {
		a.mu.Unlock()
		return
	}
	if e.job != uuid.Nil {
		a.ran = append(a.ran, e.job)
		e.job = uuid.Nil
	}
	var next time.Time
	if !e.slots.Once() {
		next = e.slots.Next(slot)
	}
	a.mu.Unlock()
	if !next.IsZero() {
		if err := a.schedule(e, next); err != nil {
			// Not armed any more: reconcile releases the claim and publish
			// arms it again (the slot, if missed, is a misfire then).
			a.logger.Error("schedule next slot", "task_id", taskID, "error", err)
			a.disarmGen(taskID, gen)
		}
	}
	a.fire(e, slot, task.TriggerSchedule, next)
}

// fire fires one slot of e and handles the outcome.
func (a *armer) fire(e *armedTask, slot time.Time, trigger task.TriggerType, next time.Time) {
	outcome, t, err := a.firer.Fire(a.ctx, fire.Params{Armed: e.task, Slot: slot, Trigger: trigger, NextFire: next})
	switch {
	case errors.Is(err, context.Canceled):
	case err != nil:
		// The store could not take the fire (an outage): the slot is in
		// no ledger. Disarm the task: reconcile releases its claim and
		// publish arms it again once the store answers, and arming fires
		// the slots missed since the ledger's last one by the task's
		// misfire policy, exactly as after a restart. Nothing is dropped
		// silently: each missed slot ends in the ledger or is counted as
		// skipped by the policy.
		a.logger.Error("fire failed; the task is re-armed and its missed slots follow its misfire policy",
			"task_id", e.task.TaskID, "slot", slot, "error", err)
		a.disarmGen(e.task.TaskID, e.gen)
	case outcome == fire.Stale:
		a.disarmGen(e.task.TaskID, e.gen)
	case outcome == fire.Duplicate:
		a.logger.Debug("slot already fired", "task_id", e.task.TaskID, "slot", slot)
	case t.Version != e.task.Version:
		a.mu.Lock()
		e.task = t // same schedule, new content
		a.mu.Unlock()
	}
}

// Disarm removes a task's schedule.
func (a *armer) Disarm(taskID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.removeJobLocked(taskID)
	delete(a.jobs, taskID)
}

func (a *armer) disarmGen(taskID string, gen uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e := a.jobs[taskID]; e != nil && e.gen == gen {
		a.removeJobLocked(taskID)
		delete(a.jobs, taskID)
	}
}

func (a *armer) removeJobLocked(taskID string) {
	if e := a.jobs[taskID]; e != nil && e.job != uuid.Nil {
		_ = a.sched.RemoveJob(e.job)
		e.job = uuid.Nil
	}
}

// Sweep removes the one-time jobs that have run from gocron; it returns
// how many.
func (a *armer) Sweep() int {
	a.mu.Lock()
	ran := a.ran
	a.ran = nil
	a.mu.Unlock()
	for _, id := range ran {
		_ = a.sched.RemoveJob(id) // gone already when its task was disarmed
	}
	return len(ran)
}

// Armed returns the ids of the tasks armed here.
func (a *armer) Armed() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.jobs))
	for id := range a.jobs {
		ids = append(ids, id)
	}
	return ids
}

// armedSummary is what the status endpoint shows of the armed tasks.
type armedSummary struct {
	total int
	due   []statusNext // delayed jobs waiting for their instant
}

// armedJobs summarises the tasks armed here.
func (a *armer) armedJobs() armedSummary {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := armedSummary{total: len(a.jobs)}
	for id, e := range a.jobs {
		if j := e.task.Job; j != nil && !j.DueAt.IsZero() && e.job != uuid.Nil {
			s.due = append(s.due, statusNext{ID: id, DueAt: j.DueAt})
		}
	}
	return s
}
