package fire

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

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
	if run.State == task.RunPending {
		// A queued run's turn: delivered only while its task still is.
		if !f.startQueued(ctx, t, tg, run) {
			return
		}
		stored = true
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
		_ = f.finish(ctx, t, tg, run, task.RunDead, "retries exhausted") // logged
		return 0, false
	}
	if !stored {
		if err := f.startAttempt(ctx, t, run); err != nil {
			// Taken over (fenced), gone, or the store is out: no attempt
			// without its record; an unfinished run is the rescuer's.
			log.InfoContext(ctx, "attempt not started", "attempt", run.Attempt, "error", err)
			return 0, false
		}
	}
	answer := "" // this call's answer, kept beside a final report that beats it (endAnswer)
	f.beginAnswer(run)
	defer func() { f.endAnswer(ctx, tg, run.TriggerID, answer) }() // after the outcome's write below
	out, err := f.call(ctx, t, tg, run)
	answer = out
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
	f.health.add(tg, f.now(), err)
	run.Output = task.Truncate(out, task.MaxOutput)
	if err == nil {
		if tg != nil && tg.FeedbackTimeout > 0 {
			f.accept(ctx, t, tg, run)
		} else {
			_ = f.answered(ctx, t, tg, run, task.RunDone, "") // logged
		}
		return 0, false
	}
	run.Error = task.Truncate(err.Error(), task.MaxOutput)
	if task.IsPermanent(err) || run.Attempt >= 1+t.MaxRetries {
		log.WarnContext(ctx, "delivery failed for good", "attempt", run.Attempt, "error", err)
		_ = f.answered(ctx, t, tg, run, task.RunDead, run.Error) // logged
		return 0, false
	}
	wait = f.backoff(run.Attempt)
	if d, ok := task.RetryDelay(err); ok && d > wait {
		wait = d
	}
	if err := f.failAttempt(ctx, t, tg, run, wait); err != nil {
		log.InfoContext(ctx, "failed attempt not recorded; retry left to its owner", "attempt", run.Attempt, "error", err)
		return 0, false
	}
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
	// The Gate checked this node's standing before this wait: check it
	// again, so that a process that lost its node id while the delivery
	// waited for a slot calls no one.
	if f.cfg.Standing != nil {
		if err := f.cfg.Standing(ctx); err != nil {
			return "", fmt.Errorf("%w: %w", errNotStarted, err)
		}
	}
	if f.now().Sub(began) > longWait {
		// All slots were busy for a while: re-assert the run (fenced) so
		// that a run taken over meanwhile is not sent twice.
		if err := f.renew(ctx, t, run); err != nil {
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
	// Read before the internal params are dropped: ParamSubject (a flow
	// step's) stands over the title.
	subject := cmp.Or(params[task.ParamSubject], params[task.ParamTitle])
	if kind != task.ChannelBuiltin {
		params = task.ExternalParams(params) // the builtin executor alone reads them
	}
	d := task.Delivery{
		TaskID:      t.TaskID,
		TriggerID:   run.TriggerID,
		Slot:        run.Slot,
		Attempt:     run.Attempt,
		Channel:     kind,
		To:          params[task.ParamTo],
		Subject:     subject,
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

// ttlOf is the deadline of one attempt of t.
func ttlOf(t *task.Task) time.Duration {
	if t.TTL <= 0 {
		return task.DefaultTTL
	}
	return t.TTL
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
