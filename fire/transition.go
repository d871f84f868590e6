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

// The Firer owns the state machine of a run. Every change of a run's
// state goes through one of the methods below, which writes it in the
// store (fenced: a write of a run that was taken over, or ended by its
// target's final report, is refused) together with what it means for
// the task (taskStatus), and then tells the observers through observe:
//
//	fire            ─▶ pending | running | rejected | skipped  (Fire, Trigger, alerts)
//	pending         ─▶ running           startQueued (a queued run's turn: startAttempt)
//	running         ─▶ cancelled         startQueued, right after: its task was switched
//	                                     off, stopped, closed or deleted while it was queued
//	pending         ─▶ cancelled         EndQueued (the same, before its turn)
//	running         ─▶ running           startAttempt, renew
//	running         ─▶ failed            failAttempt (a retry follows)
//	running         ─▶ done | dead       finish (the target's answer, retries exhausted)
//	running         ─▶ accepted          accept (a target that sends feedback answered)
//	running|accepted ─▶ done | dead      Feedback (the target's final report)
//	accepted        ─▶ timeout           ExpireAccepted
//	unfinished      ─▶ (this node's)     takeOver (rescue, cancel)
//	unfinished      ─▶ cancelled         CancelRun, cancelOrphan
//	accepted        ─▶ cancelled         CancelAccepted (a stopped flow execution)
//
// The store persists each transition; it never decides one.

// observe tells the observers of a stored change of run: when run is
// final, the overlap policy first (deactivate: the task's next slot no
// longer overlaps it); then Config.OnRun (metrics, job events, flows);
// then, for a failure, the task's alert (alertLater). The task's own
// status (last status, done, next fire) is written with the change
// itself (taskStatus), not here.
func (f *Firer) observe(t *task.Task, tg *task.Target, run *task.Run) {
	final := run.State.Final()
	if final {
		f.deactivate(run)
	}
	if f.cfg.OnRun != nil {
		f.cfg.OnRun(t, tg, *run)
	}
	if final {
		f.alertLater(t, run)
	}
}

// taskStatus is what run ending in state (or being accepted, which counts
// as success for the schedule) writes on its task t: state as the last
// status and, when run uses up the schedule (usesUpSchedule), done with
// no next fire; the slot as last fire too when the fire did not write it
// (statusAtEnd). An alert run leaves its task's status alone.
func taskStatus(t *task.Task, run *task.Run, state task.RunState) store.TaskStatusParams {
	if run.TriggerType == task.TriggerAlert {
		return store.TaskStatusParams{TaskID: t.TaskID}
	}
	done := usesUpSchedule(t, run, state == task.RunDone || state == task.RunAccepted)
	status := store.TaskStatusParams{TaskID: t.TaskID, LastStatus: string(state), StatusSlot: run.Slot, Done: done,
		SetNextFire: done}
	if statusAtEnd(t, run.TriggerType) {
		status.LastFire = run.Slot
	}
	return status
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

// observeFire tells the observers of a run a fire just recorded:
// Config.OnFire first, then as observe does.
func (f *Firer) observeFire(t *task.Task, tg *task.Target, run *task.Run) {
	if f.cfg.OnFire != nil {
		f.cfg.OnFire(t, tg, *run)
	}
	f.observe(t, tg, run)
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

// startAttempt records that an attempt of run starts: running, its
// deadline the task's ttl from now. The fire (attempt 1) or the failed
// attempt before it was told already; this is not.
func (f *Firer) startAttempt(ctx context.Context, t *task.Task, run *task.Run) error {
	run.State = task.RunRunning
	run.NextAttempt = time.Time{}
	return f.renew(ctx, t, run)
}

// renew re-asserts run as this delivery's (a fenced write) with its
// deadline the task's ttl from now.
func (f *Firer) renew(ctx context.Context, t *task.Task, run *task.Run) error {
	run.Deadline = f.now().Add(ttlOf(t))
	return f.persist(ctx, run, forPersistFor, func(sctx context.Context) error {
		if f.runs != nil {
			return f.runs.submit(runWrite{rec: store.FireRecord{Run: run}, kind: writeUpdate})[0].err
		}
		return f.store.UpdateRun(sctx, run)
	})
}

// failAttempt records that run's attempt failed and is retried after
// wait, and tells the observers. It is the outcome of a delivered call,
// so its write is retried while this process lives (whileAlive).
func (f *Firer) failAttempt(ctx context.Context, t *task.Task, tg *task.Target, run *task.Run, wait time.Duration) error {
	run.State = task.RunFailed
	run.NextAttempt = f.now().Add(wait)
	run.Deadline = run.NextAttempt.Add(ttlOf(t))
	if err := f.persist(ctx, run, whileAlive, func(sctx context.Context) error { return f.store.UpdateRun(sctx, run) }); err != nil {
		return err
	}
	f.observe(t, tg, run)
	return nil
}

// startQueued starts the turn of a queued run (recorded pending: overlap
// queue, or a missed slot replayed behind the others) and reports whether
// it is to be delivered. It first takes the run from pending to running
// with a fenced write, and only then reads its task again: a task that
// was switched off, stopped (paused, blocked), closed (cancelled) or
// deleted while the run waited ends the run cancelled with the reason,
// undelivered. A cancel that writes the task's state before the run's
// turn is thus always seen; a turn whose read came first had started
// before the cancel was written, like a slot fired just before it. A
// task that cannot be read is delivered to, as the fire's own check
// allowed. A run taken over meanwhile is refused the write and left to
// its new owner.
func (f *Firer) startQueued(ctx context.Context, t *task.Task, tg *task.Target, run *task.Run) bool {
	if err := f.startAttempt(ctx, t, run); err != nil {
		f.logger.InfoContext(ctx, "queued run not started", "task_id", run.TaskID, "trigger_id", run.TriggerID, "error", err)
		return false
	}
	now, why, err := f.heldBack(ctx, run.TaskID, whileQueued)
	if err != nil {
		f.logger.WarnContext(ctx, "queued run: task not read again; delivering", "task_id", run.TaskID,
			"trigger_id", run.TriggerID, "error", err)
		return true
	}
	if why == "" {
		return true
	}
	f.logger.InfoContext(ctx, "queued run not delivered", "task_id", run.TaskID, "trigger_id", run.TriggerID, "why", why)
	if now == nil {
		now = &task.Task{TaskID: run.TaskID}
	}
	_ = f.finish(ctx, now, tg, run, task.RunCancelled, why) // logged
	return false
}

// Where a run waited when heldBack finds its task gone (the words of its
// reason).
const (
	whileQueued   = "while this run was queued"
	whileRecorded = "while this run was recorded"
)

// heldBack reads task id and says why a run of it that waited (queued, or
// its record slow: while says which) must not be delivered now ("" when
// it may): the task is gone, switched off, or not running (stopped or
// closed). It returns the task as read (nil when gone).
func (f *Firer) heldBack(ctx context.Context, id, while string) (*task.Task, string, error) {
	t, err := f.getTask(ctx, id)
	switch {
	case errors.Is(err, task.ErrNotFound):
		return nil, "the task was deleted " + while, nil
	case err != nil:
		return nil, "", err
	case t.IsEnable != 1:
		return t, "the task was switched off " + while, nil
	case t.State != task.StateRunning:
		return t, fmt.Sprintf("the task was %s %s", t.State, while), nil
	}
	return t, "", nil
}

// finish records a run's final state with its task's status and tells
// the observers. A run whose task is gone (deleted meanwhile) still
// finishes, without the status. tg is the target delivered to, for
// Config.OnRun (nil when unknown). It returns the store's refusal or
// failure, which it has logged. Its write is retried for
// Config.PersistFor: no delivered call waits on it (answered is finish
// for the outcome of one).
func (f *Firer) finish(ctx context.Context, t *task.Task, tg *task.Target, run *task.Run, state task.RunState, msg string) error {
	return f.finishFor(ctx, t, tg, run, state, msg, forPersistFor)
}

// answered is finish for the outcome of a delivered call (the target's
// answer, or the call's last failure): its write is retried while this
// process lives (whileAlive), since a run left running would be rescued
// and delivered again.
func (f *Firer) answered(ctx context.Context, t *task.Task, tg *task.Target, run *task.Run, state task.RunState, msg string) error {
	return f.finishFor(ctx, t, tg, run, state, msg, whileAlive)
}

// finishFor is finish with its write retried as until says.
func (f *Firer) finishFor(ctx context.Context, t *task.Task, tg *task.Target, run *task.Run, state task.RunState, msg string, until persistence) error {
	run.State = state
	run.FinishedAt = f.now()
	run.NextAttempt, run.Deadline = time.Time{}, time.Time{}
	if msg != "" {
		run.Error = task.Truncate(msg, task.MaxOutput)
	}
	status := taskStatus(t, run, state)
	err := f.persist(ctx, run, until, func(sctx context.Context) error {
		err := f.finishRun(sctx, run, status)
		if errors.Is(err, task.ErrNotFound) {
			return f.store.UpdateRun(sctx, run) // the task is gone, the run not
		}
		return err
	})
	switch {
	case errors.Is(err, task.ErrFenced):
		f.logFenced(ctx, run, state)
	case err != nil:
		f.logger.ErrorContext(ctx, "finish run", "task_id", run.TaskID, "trigger_id", run.TriggerID, "error", err)
	default:
		f.observe(t, tg, run)
	}
	return err
}

// logFenced logs that run's outcome (state) was refused: the run ended by
// its target's final report meanwhile (it then stands), or another node
// took it over while this delivery went on (when this attempt was
// delivered, the run may be delivered twice).
func (f *Firer) logFenced(ctx context.Context, run *task.Run, state task.RunState) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.cfg.StoreTimeout)
	stored, err := f.store.GetRun(sctx, run.TriggerID)
	cancel()
	if err == nil && stored.State.Final() {
		f.logger.DebugContext(ctx, "run ended by its target's feedback before this outcome was recorded",
			"trigger_id", run.TriggerID, "state", stored.State, "outcome", state)
		return
	}
	f.logger.WarnContext(ctx, "run taken over by another delivery while it was delivered here; outcome not recorded here",
		"task_id", run.TaskID, "trigger_id", run.TriggerID, "state", state, "attempt", run.Attempt)
}

// finishRun stores a finished run and its task's status: group-committed
// with the runs finishing and the fires recorded at the same time when the
// store can (the run writer), else with the runs finishing then.
func (f *Firer) finishRun(ctx context.Context, run *task.Run, status store.TaskStatusParams) error {
	if f.runs != nil {
		return f.runs.submit(runWrite{rec: store.FireRecord{Run: run, Status: status}, kind: writeOutcome})[0].err
	}
	if f.fin != nil {
		return f.fin.submit(store.FireRecord{Run: run, Status: status})[0]
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.cfg.StoreTimeout)
	defer cancel()
	return f.store.FinishRun(sctx, run, status)
}

// accept records that tg accepted run: the run waits, accepted, for the
// target's feedback until its deadline (tg.FeedbackTimeout from now). For
// the schedule, acceptance counts as success. It is the outcome of a
// delivered call: its write is retried while this process lives
// (whileAlive), as finish's is for answered, since a run left running
// would be rescued and delivered again. A run that ended by its target's
// final report before this (the target reported before its answer
// returned) stands: nothing is written over it and the observers, told by
// Feedback, are not told again; nor is a run another node took over.
func (f *Firer) accept(ctx context.Context, t *task.Task, tg *task.Target, run *task.Run) {
	run.State = task.RunAccepted
	run.Deadline = f.now().Add(time.Duration(tg.FeedbackTimeout) * time.Second)
	run.NextAttempt = time.Time{}
	run.Error = ""
	status := taskStatus(t, run, task.RunAccepted)
	var stored bool
	err := f.persist(ctx, run, whileAlive, func(sctx context.Context) error {
		var err error
		stored, err = f.acceptRun(sctx, run, status)
		return err
	})
	switch {
	case err != nil:
		f.logger.ErrorContext(ctx, "accept run", "task_id", run.TaskID, "trigger_id", run.TriggerID, "error", err)
	case !stored:
		f.logger.DebugContext(ctx, "run finished by feedback, or taken over, before it was accepted", "trigger_id", run.TriggerID)
	default:
		f.observe(t, tg, run)
	}
}

// acceptRun makes one try of accept's write and reports whether run is
// stored accepted at its fence with its deadline: by this try, or by an
// earlier one that committed though the store reported an error (the
// outcome unknown). The store answers true for that too: the same write
// again (accepted at run's fence with run's deadline) is idempotent and
// applies the task's status, which a driver without transactions may
// not have written before its error (store.Control.AcceptRun). A final
// report and a take-over both move the fence, so false means the run was
// finished by its report or taken over. A run whose task is gone (purged
// while the call was made: AcceptRun's task.ErrNotFound) is stored
// accepted without the task's status, as finish stores an outcome, so
// that its feedback deadline is kept; that write is fenced too.
func (f *Firer) acceptRun(ctx context.Context, run *task.Run, status store.TaskStatusParams) (bool, error) {
	ok, err := f.store.AcceptRun(ctx, run, status)
	if errors.Is(err, task.ErrNotFound) {
		w := *run
		w.Feedback = nil // the stored reports stay: a progress report may have come since run was read
		err = f.store.UpdateRun(ctx, &w)
		if errors.Is(err, task.ErrFenced) {
			return false, nil // ended by its final report, or taken over
		}
		return err == nil, err // task.ErrNotFound: the run is gone too
	}
	return ok, err
}

// Feedback records a target's report on a run (store.Control.AddFeedback)
// and returns the run as stored. A final report ends the run, done for
// status 0, else dead, with the task's status as the run's end decides it
// (taskStatus): a report that beats the target's HTTP answer uses up the
// schedule as the answer would have, and the answer, coming later, is
// refused (the report bumped the run's fence) but for its output, kept
// beside the report (answer.go). The observers are told of the end once:
// here, or, when the run's call is in flight here, by its delivery once
// the answer is kept (holdReport). A progress report changes no state and tells no one.
// Errors are the store's: task.ErrNotFound, task.ErrConflict (finished
// or full), task.ErrInvalid.
func (f *Firer) Feedback(ctx context.Context, p store.FeedbackParams) (*task.Run, error) {
	if err := p.Feedback.Validate(); err != nil || p.Feedback.Progress {
		return f.store.AddFeedback(ctx, p) // the store says what is wrong
	}
	r, err := f.store.GetRun(ctx, p.TriggerID)
	if err != nil {
		return nil, fmt.Errorf("add feedback to run %s: %w", p.TriggerID, err)
	}
	t, err := f.taskOrStub(ctx, r.TaskID)
	if err != nil {
		return nil, fmt.Errorf("add feedback to run %s: %w", p.TriggerID, err)
	}
	state, _ := p.Feedback.Outcome()
	p.Status = taskStatus(t, r, state)
	out, err := f.store.AddFeedback(ctx, p)
	if err != nil {
		return nil, err
	}
	if !f.holdReport(t, out) {
		f.observe(t, nil, out)
	}
	return out, nil
}

// timeoutStatus is what an accepted run timing out writes on its task:
// timeout as the last status (the schedule was used up when the run was
// accepted); an alert run leaves its task's status alone.
func timeoutStatus(run *task.Run) store.TaskStatusParams {
	if run.TriggerType == task.TriggerAlert {
		return store.TaskStatusParams{}
	}
	return store.TaskStatusParams{TaskID: run.TaskID, LastStatus: string(task.RunTimeout), StatusSlot: run.Slot}
}

// ExpireAccepted times out up to limit accepted runs whose feedback
// deadline passed (store.Control.ExpireAccepted) and tells the observers
// of each. It returns how many it timed out.
func (f *Firer) ExpireAccepted(ctx context.Context, limit int) (int, error) {
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	runs, err := f.store.ExpireAccepted(sctx, f.now(), limit, timeoutStatus)
	cancel()
	if err != nil {
		return 0, fmt.Errorf("expire accepted runs: %w", err)
	}
	for _, r := range runs {
		f.logger.InfoContext(ctx, "run timed out waiting for feedback", "task_id", r.TaskID, "trigger_id", r.TriggerID,
			"target", r.Target)
		t, err := f.taskOrStub(ctx, r.TaskID)
		if err != nil {
			t = &task.Task{TaskID: r.TaskID} // the timeout is stored: it is told with what is known
		}
		f.observe(t, nil, r)
	}
	return len(runs), nil
}

// CancelAccepted ends r, an accepted run as read, as cancelled with why.
// It reads the run again and ends it only while it is still accepted
// under r's fence; the write is fenced on it, so that a run that ended
// meanwhile by its target's report or a timeout (both bump the fence) is
// left (task.ErrFenced). A run that is no longer accepted is
// task.ErrConflict. The write is not conditional on the state itself:
// its caller makes one cancel per run (the flows engine cancels the runs
// of an execution whose stop it won by compare-and-set).
func (f *Firer) CancelAccepted(ctx context.Context, r *task.Run, why string) error {
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	run, err := f.store.GetRun(sctx, r.TriggerID)
	cancel()
	if err != nil {
		return fmt.Errorf("cancel run %s: %w", r.TriggerID, err)
	}
	if run.State != task.RunAccepted || run.Fence != r.Fence {
		return fmt.Errorf("cancel run %s: it is %s (fence %d): %w", r.TriggerID, run.State, run.Fence, task.ErrConflict)
	}
	t, err := f.taskOrStub(ctx, run.TaskID)
	if err != nil {
		return fmt.Errorf("cancel run %s: %w", r.TriggerID, err)
	}
	return f.finish(ctx, t, nil, run, task.RunCancelled, why)
}

// takeOver bumps r's fence with this node as owner. It returns nil, nil
// when r finished or someone else took it meanwhile.
func (f *Firer) takeOver(ctx context.Context, r *task.Run) (*task.Run, error) {
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	defer cancel()
	taken, err := f.store.TakeOverRun(sctx, store.TakeOverParams{TriggerID: r.TriggerID, Fence: r.Fence,
		Deadline: r.Deadline, Node: f.cfg.Node})
	if errors.Is(err, task.ErrFenced) || errors.Is(err, task.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return taken, nil
}

// taskOrStub reads task id; a task that is gone is a stub holding only
// its id (a run outlives its task).
func (f *Firer) taskOrStub(ctx context.Context, id string) (*task.Task, error) {
	t, err := f.getTask(ctx, id)
	if errors.Is(err, task.ErrNotFound) {
		return &task.Task{TaskID: id}, nil
	}
	return t, err
}

// persistence says how long persist retries a run write that fails.
type persistence int

const (
	// forPersistFor retries for Config.PersistFor a write that no
	// delivered call waits on: an attempt's record before its call, the
	// end of a run never called (cancelled, retries exhausted, its target
	// gone). A write still failing then leaves the run as stored before
	// it, to the rescuer, and no call was made under it.
	forPersistFor persistence = iota
	// whileAlive retries the outcome of a delivered call (accepted, done,
	// dead, a failed attempt) until it is stored or refused for good:
	// left unwritten, the run would stay running and be rescued and
	// delivered again. Only Shutdown's deadline, which cancels this
	// process's work (Firer.workCtx), ends the retries; the outcome is then
	// lost, and the run, still running and owned here, is resumed by this
	// node id's next process (or another node, once this one stops
	// beating) and delivered again with the same trigger id and
	// Idempotency-Key: the duplicate that a kill -9 during the call makes
	// too.
	whileAlive
)

// persistMaxWait caps the wait between two tries of a run write.
const persistMaxWait = 5 * time.Second

// persist runs write (a write of run) until it succeeds or is refused for
// good (the run was taken over or ended by its final report:
// task.ErrFenced; or is gone: task.ErrNotFound; or is invalid), with
// backoff (capped at persistMaxWait) between tries, for as long as until
// says. A store outage thus delays a delivery's record instead of losing
// it. The caller's cancel does not cut it short: an outcome already
// reached is worth recording.
//
// Every write retried here is idempotent after an error that hid its
// commit (the outcome unknown): UpdateRun and FinishRun never move the
// fence, so a retry writes the same values again under the same fence and
// succeeds; and accept recognises its own stored write (acceptRun). Only
// a take-over, a final report and a timeout move a run's fence, none of
// them on a run in a final state: a retry refused with task.ErrFenced
// means one of them came after this write, not that this write was
// stored (logFenced tells which).
func (f *Firer) persist(ctx context.Context, run *task.Run, until persistence, write func(ctx context.Context) error) error {
	ctx = context.WithoutCancel(ctx)
	giveUp := f.now().Add(f.cfg.PersistFor)
	wait := 50 * time.Millisecond
	for {
		sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
		err := write(sctx)
		cancel()
		if err == nil || errors.Is(err, task.ErrConflict) || errors.Is(err, task.ErrNotFound) ||
			errors.Is(err, task.ErrInvalid) {
			return err
		}
		if until == forPersistFor && !f.now().Add(wait).Before(giveUp) {
			return err
		}
		f.logger.WarnContext(ctx, "run write failed, will retry", "trigger_id", run.TriggerID, "retry_in", wait, "error", err)
		if until == forPersistFor {
			time.Sleep(wait)
		} else if !sleep(f.workCtx, wait) {
			return fmt.Errorf("shut down before the outcome of a delivered call was stored: %w", err)
		}
		wait = min(2*wait, persistMaxWait)
	}
}
