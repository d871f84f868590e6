package fire

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// deliver runs the attempts of one run until it is done, dead, or ctx ends.
// stored says the ledger already holds the run as it is (a fresh fire), so
// the first attempt needs no write before it starts.
func (f *Firer) deliver(ctx context.Context, t *task.Task, tg *task.Target, run *task.Run, stored bool) {
	// A resumed run waits for the retry time its failed attempt recorded.
	if !sleep(ctx, run.NextAttempt.Sub(f.now())) {
		return
	}
	for {
		wait, again := f.step(ctx, t, tg, run, stored)
		stored = false
		if !again || !sleep(ctx, wait) {
			return
		}
		run.Attempt++
	}
}

// step makes one attempt of run and records its outcome; a delivery slot
// is held only for the call itself (see call). It returns how long to wait before the next attempt, or again=false when
// the run is finished or ctx ended.
func (f *Firer) step(ctx context.Context, t *task.Task, tg *task.Target, run *task.Run, stored bool) (wait time.Duration, again bool) {
	if f.cfg.Gate != nil {
		began := f.now()
		release, err := f.cfg.Gate(ctx, t, tg)
		if err != nil {
			return 0, false // shutting down: the run stays unfinished, for resumption
		}
		defer release()
		if f.now().Sub(began) > longWait {
			// Waited for a concurrency group or a host's rate: the run may
			// have been taken over meanwhile, so the attempt starts with
			// its fenced record (which also renews its deadline).
			stored = false
		}
	}
	log := f.logger.With("task_id", t.TaskID, "trigger_id", run.TriggerID)
	if run.Attempt > 1+t.MaxRetries {
		f.finish(ctx, t, tg, run, task.RunDead, "retries exhausted")
		return 0, false
	}
	if !stored {
		run.State = task.RunRunning
		run.NextAttempt = time.Time{}
		run.Deadline = f.now().Add(ttlOf(t))
		if err := f.persist(ctx, run, func(sctx context.Context) error { return f.store.UpdateRun(sctx, run) }); err != nil {
			// Taken over (fenced), gone, or the store is out: no attempt
			// without its record; an unfinished run is the rescuer's.
			log.InfoContext(ctx, "attempt not started", "attempt", run.Attempt, "error", err)
			return 0, false
		}
	}
	out, err := f.call(ctx, t, tg, run)
	if errors.Is(err, errNotStarted) {
		log.InfoContext(ctx, "attempt not started after waiting for a delivery slot", "attempt", run.Attempt, "error", err)
		return 0, false
	}
	if err != nil && ctx.Err() != nil {
		// Shutting down: leave the run unfinished for whoever arms the task
		// next; this attempt is counted when it resumes. (An attempt that
		// succeeded is recorded below: resuming it would send it again.)
		log.InfoContext(ctx, "delivery interrupted by shutdown", "attempt", run.Attempt)
		return 0, false
	}
	run.Output = task.Truncate(out, task.MaxOutput)
	if err == nil {
		if tg != nil && tg.FeedbackTimeout > 0 {
			f.accept(ctx, t, tg, run)
		} else {
			f.finish(ctx, t, tg, run, task.RunDone, "")
		}
		return 0, false
	}
	run.Error = task.Truncate(err.Error(), task.MaxOutput)
	if task.IsPermanent(err) || run.Attempt >= 1+t.MaxRetries {
		log.WarnContext(ctx, "delivery failed for good", "attempt", run.Attempt, "error", err)
		f.finish(ctx, t, tg, run, task.RunDead, run.Error)
		return 0, false
	}
	wait = f.backoff(run.Attempt)
	if d, ok := task.RetryDelay(err); ok && d > wait {
		wait = d
	}
	run.State = task.RunFailed
	run.NextAttempt = f.now().Add(wait)
	run.Deadline = run.NextAttempt.Add(ttlOf(t))
	if err := f.persist(ctx, run, func(sctx context.Context) error { return f.store.UpdateRun(sctx, run) }); err != nil {
		log.InfoContext(ctx, "failed attempt not recorded; retry left to its owner", "attempt", run.Attempt, "error", err)
		return 0, false
	}
	f.notify(t, tg, run)
	log.InfoContext(ctx, "delivery failed, will retry", "attempt", run.Attempt, "retry_in", wait, "error", err)
	return wait, true
}

// call makes one attempt holding one of the Firer's delivery slots, and
// only for the call: the store writes around it (the attempt's record, the
// outcome's group commit) never hold a slot, so deliveries do not queue
// behind a busy store writer while calls could go on.
func (f *Firer) call(ctx context.Context, t *task.Task, tg *task.Target, run *task.Run) (string, error) {
	began := f.now()
	select {
	case f.slots <- struct{}{}:
		defer func() { <-f.slots }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if f.now().Sub(began) > longWait {
		// All slots were busy for a while: re-assert the run (fenced) so
		// that a run taken over meanwhile is not sent twice.
		run.Deadline = f.now().Add(ttlOf(t))
		if err := f.persist(ctx, run, func(sctx context.Context) error { return f.store.UpdateRun(sctx, run) }); err != nil {
			return "", fmt.Errorf("%w: %w", errNotStarted, err)
		}
	}
	return f.attempt(ctx, t, tg, run)
}

// longWait is how long a delivery may wait (for a delivery slot, a
// concurrency group, a host's rate) before its attempt first re-asserts
// the run with a fenced write: another node may have taken it over.
const longWait = time.Second

// errNotStarted says an attempt was not made: its run could not be
// re-asserted after a long wait (taken over, gone, or the store is out).
var errNotStarted = errors.New("attempt not started")

// sleep waits for d (not at all when d <= 0) and reports whether ctx was
// still alive then.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// attempt makes one delivery attempt with the task's ttl as deadline.
func (f *Firer) attempt(ctx context.Context, t *task.Task, tg *task.Target, run *task.Run) (string, error) {
	kind := t.TaskType
	if tg != nil {
		kind = tg.Kind
	}
	exec, err := f.execs.Get(kind)
	if err != nil {
		return "", err
	}
	ttl := ttlOf(t)
	actx, cancel := context.WithTimeout(ctx, ttl)
	defer cancel()
	params := mergeParams(t.Params, run.Params)
	d := task.Delivery{
		TaskID:      t.TaskID,
		TriggerID:   run.TriggerID,
		Slot:        run.Slot,
		Attempt:     run.Attempt,
		Channel:     kind,
		To:          params[task.ParamTo],
		Subject:     params[task.ParamTitle],
		Body:        t.TaskPara,
		Params:      params,
		TriggerType: run.TriggerType,
		Target:      tg,
		Node:        f.cfg.Node,
		Instance:    f.cfg.Instance,
	}
	if run.TriggerType == task.TriggerAlert {
		d.Subject = "cronsheet alert: task " + t.TaskID + " is failing"
		if params["alert_state"] == "absent" {
			d.Subject = "cronsheet alert: task " + t.TaskID + " did not fire"
		}
		d.Body = params["alert_message"]
		d.LedgerTarget = run.Target
	}
	out, err := exec.Execute(actx, d)
	if err != nil && errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		return out, errors.Join(errors.New("attempt exceeded its ttl of "+ttl.String()), err)
	}
	return out, err
}

// finish records a run's final state and the task's feedback. A run whose
// task is gone (deleted meanwhile) still finishes, without the feedback.
// tg is the target delivered to, for Config.OnRun (nil when unknown).
func (f *Firer) finish(ctx context.Context, t *task.Task, tg *task.Target, run *task.Run, state task.RunState, msg string) {
	run.State = state
	run.FinishedAt = f.now()
	run.NextAttempt, run.Deadline = time.Time{}, time.Time{}
	if msg != "" {
		run.Error = task.Truncate(msg, task.MaxOutput)
	}
	done := usesUpSchedule(t, run, state == task.RunDone)
	status := endStatus(t, run, state, done)
	if run.TriggerType == task.TriggerAlert {
		status = store.TaskStatusParams{TaskID: t.TaskID} // an alert leaves the task's own status
	}
	err := f.persist(ctx, run, func(sctx context.Context) error {
		err := f.finishRun(sctx, run, status)
		if errors.Is(err, task.ErrNotFound) {
			return f.store.UpdateRun(sctx, run) // the task is gone, the run not
		}
		return err
	})
	switch {
	case errors.Is(err, task.ErrFenced):
		// Another node judged this one gone (or the run stuck) and took the
		// run over while this delivery went on: when this attempt was
		// delivered, the run may be delivered twice.
		f.logger.WarnContext(ctx, "run taken over by another delivery while it was delivered here; outcome not recorded here",
			"task_id", run.TaskID, "trigger_id", run.TriggerID, "state", state, "attempt", run.Attempt)
	case err != nil:
		f.logger.ErrorContext(ctx, "finish run", "task_id", run.TaskID, "trigger_id", run.TriggerID, "error", err)
	default:
		f.deactivate(run) // its outcome is stored: the task's next slot no longer overlaps it
		f.notify(t, tg, run)
		f.alertLater(t, run)
	}
}

// endStatus is t's feedback when run ends in state (or is accepted):
// the state, and done (with no next fire) when the run used up the
// schedule; the slot as last fire too when it was not written at the
// fire (statusAtEnd).
func endStatus(t *task.Task, run *task.Run, state task.RunState, done bool) store.TaskStatusParams {
	status := store.TaskStatusParams{TaskID: t.TaskID, LastStatus: string(state), Done: done, SetNextFire: done}
	if statusAtEnd(t, run.TriggerType) {
		status.LastFire = run.Slot
	}
	return status
}

// persist runs write (a write of run) until it succeeds, is refused for
// good (the run was taken over: task.ErrFenced; or is gone:
// task.ErrNotFound; or is invalid), or Config.PersistFor has passed, with
// backoff between tries. A store outage thus delays a delivery's record
// instead of losing it. Shutdown does not cut it short: an outcome already
// reached is worth recording.
func (f *Firer) persist(ctx context.Context, run *task.Run, write func(ctx context.Context) error) error {
	ctx = context.WithoutCancel(ctx)
	giveUp := f.now().Add(f.cfg.PersistFor)
	wait := 50 * time.Millisecond
	for {
		sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
		err := write(sctx)
		cancel()
		if err == nil || errors.Is(err, task.ErrConflict) || errors.Is(err, task.ErrNotFound) ||
			errors.Is(err, task.ErrInvalid) || !f.now().Add(wait).Before(giveUp) {
			return err
		}
		f.logger.WarnContext(ctx, "run write failed, will retry", "trigger_id", run.TriggerID, "retry_in", wait, "error", err)
		time.Sleep(wait)
		wait = min(2*wait, 5*time.Second)
	}
}

// ttlOf is the deadline of one attempt of t.
func ttlOf(t *task.Task) time.Duration {
	if t.TTL <= 0 {
		return task.DefaultTTL
	}
	return t.TTL
}

// usesUpSchedule reports whether run finishing (succeeded or not) makes its
// task done. Only scheduled runs count: a manual run ("run now") does not
// use up the schedule: a once task still fires at its slot, an
// until_success task keeps its schedule. The run of a periodic task's
// last slot before its end time makes it done too.
func usesUpSchedule(t *task.Task, run *task.Run, succeeded bool) bool {
	if !run.TriggerType.Scheduled() {
		return false
	}
	return t.ExecuteType == task.Once || (t.ExecuteType == task.UntilSuccess && succeeded) || lastSlot(t, run.Slot)
}

// lastSlot reports whether slot is the last one of t's schedule (it has an
// end time and no slot follows before it).
func lastSlot(t *task.Task, slot time.Time) bool {
	if t.EndTime.IsZero() {
		return false
	}
	sched, err := mapping.Schedule(t)
	if err != nil {
		return false
	}
	return NewSlots(t, sched).Next(slot).IsZero()
}

// accept records that tg accepted run: the run waits, accepted, for the
// target's feedback until its deadline (tg.FeedbackTimeout from now). For
// the schedule, acceptance counts as success. Feedback that arrived
// before this (the target answered before its response) stands.
func (f *Firer) accept(ctx context.Context, t *task.Task, tg *task.Target, run *task.Run) {
	run.State = task.RunAccepted
	run.Deadline = f.now().Add(time.Duration(tg.FeedbackTimeout) * time.Second)
	run.NextAttempt = time.Time{}
	run.Error = ""
	done := usesUpSchedule(t, run, true)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.cfg.StoreTimeout)
	defer cancel()
	ok, err := f.store.AcceptRun(sctx, run, endStatus(t, run, task.RunAccepted, done))
	switch {
	case err != nil:
		f.logger.ErrorContext(ctx, "accept run", "task_id", run.TaskID, "trigger_id", run.TriggerID, "error", err)
	case !ok:
		f.logger.DebugContext(ctx, "run finished by feedback before it was accepted", "trigger_id", run.TriggerID)
	default:
		f.notify(t, tg, run)
	}
}

// mergeParams returns base with over's keys set over it (base itself when
// over is empty).
func mergeParams(base, over map[string]string) map[string]string {
	if len(over) == 0 {
		return base
	}
	m := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		m[k] = v
	}
	for k, v := range over {
		m[k] = v
	}
	return m
}

// finishRun stores a finished run and its task's status: group-committed
// with the runs finishing at the same time when the store can.
func (f *Firer) finishRun(ctx context.Context, run *task.Run, status store.TaskStatusParams) error {
	if f.fin != nil {
		return f.fin.submit(store.FireRecord{Run: run, Status: status})[0]
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.cfg.StoreTimeout)
	defer cancel()
	return f.store.FinishRun(sctx, run, status)
}
