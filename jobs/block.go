package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cronsheet/fire"
	"cronsheet/mapping/schedule"
	"cronsheet/store"
	"cronsheet/task"
)

// blockedReason is the error of the run a block leaves in the ledger (a
// block marker): it holds the job's current slot so that a fire racing
// the block finds the slot taken and sends nothing.
const blockedReason = "blocked"

// blockGuard is how close to now a job's current slot must be for a
// block to take it in the ledger. A fire reads its task no sooner than its
// slot (on its node's clock), so a slot further away than the clocks of
// two nodes differ cannot be in progress: setting the task stopped is
// enough, and the slot stays free for an unblock before it.
const blockGuard = 2 * time.Second

// isBlockMarker reports whether r is the run a block left in the ledger.
func isBlockMarker(r *task.Run) bool {
	return r.State == task.RunCancelled && r.Error == blockedReason && r.Target == task.JobTargetID &&
		r.TriggerType == task.TriggerSchedule
}

// Block keeps a job from running until Unblock. Exactly one of blocked and
// fired wins for the job's current slot, through the fire ledger (a block
// that is close to the slot takes it the way cancel does). A cron job
// whose run is in progress is blocked at once, as a cancel stops it: no
// slot fires after the block is stored, its runs queued behind the one in
// progress (overlap: queue) end cancelled (the stop releases the job's
// claim and its node ends them, fire.Firer.EndQueued, or a queued run's
// turn finds the job stopped), and the run in progress ends as it would;
// the job reads running until it has, blocked after (task.DeriveJobState).
// A delayed job that already ran or is running, a cron job whose schedule
// ended, and a cancelled job are task.ErrConflict (a job that ran wraps
// ErrTooLate).
func (s *Service) Block(ctx context.Context, id string) (*View, error) {
	t, err := s.jobTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.blockable(ctx, t, "blocked"); err != nil {
		return nil, err
	}
	slot, err := s.currentSlot(ctx, t)
	if err != nil {
		return nil, err
	}
	held := false
	if !slot.IsZero() && !slot.After(s.now().Add(blockGuard)) {
		if err := s.holdSlot(ctx, t, slot); err != nil {
			return nil, err
		}
		held = true
	}
	if err := s.stop(ctx, t, slot, held); err != nil {
		if errors.Is(err, ErrNotRecorded) {
			s.wake() // the block is stored: the patrols must see it
		}
		return nil, err
	}
	s.wake()
	return s.Get(ctx, id)
}

// stop writes job t stopped and hands over its blocked transition, under
// stopMu (a run ending meanwhile adds no pending after it). slot is its
// current slot, held whether the block took it already.
func (s *Service) stop(ctx context.Context, t *task.Task, slot time.Time, held bool) error {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	id := t.TaskID
	now := s.now()
	if _, err := s.store.SetTaskState(ctx, store.TaskStateParams{TaskID: id, State: task.StateStopped, Anchor: now, Now: now}); err != nil {
		return err
	}
	if !held && !slot.IsZero() && !slot.After(s.now().Add(blockGuard)) {
		// The slot came close while the state was written: a fire may have
		// read the job as running. Take the slot; a fire that won it
		// undoes the block.
		if err := s.holdSlot(ctx, t, slot); err != nil {
			if _, rerr := s.store.SetTaskState(ctx, store.TaskStateParams{TaskID: id, State: t.State, Anchor: t.Anchor, Now: s.now()}); rerr != nil {
				return errors.Join(err, fmt.Errorf("undo block of job %s: %w", id, rerr))
			}
			return err
		}
	}
	// The job is stopped (stored) whether or not its transition is stored
	// in time: ErrNotRecorded says it is not yet.
	return s.eventNow(ctx, store.JobEvent{JobID: id, At: now, State: task.JobBlocked, Reason: "blocked"})
}

// Unblock lets a blocked job run again: a delayed job whose slot the block
// took fires at once (its due time has passed or is at most blockGuard
// away); otherwise the schedule goes on from now. A delayed job that
// already ran, a cron job whose schedule ended and a cancelled job are
// task.ErrConflict.
func (s *Service) Unblock(ctx context.Context, id string) (*View, error) {
	t, err := s.jobTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.blockable(ctx, t, "unblocked"); err != nil {
		return nil, err
	}
	if !t.Job.DueAt.IsZero() {
		latest, err := s.latestRun(ctx, t.TaskID)
		if err != nil {
			return nil, err
		}
		if latest != nil && isBlockMarker(latest) {
			// The block holds the job's one slot: fire it now, under a
			// slot of its own just after (the same one for a repeated
			// unblock, so the ledger lets only one through).
			at := latest.Slot.Add(time.Millisecond)
			tt := task.TriggerManual
			if t.IsDone == 1 {
				// The patrol found its one slot in the ledger (the block's
				// run) and marked it done: only a backfill runs it now.
				tt = task.TriggerBackfill
			}
			if _, err := s.trigger(ctx, fire.TriggerParams{TaskID: id, At: at, Type: tt}); err != nil {
				r, rerr := s.runAt(ctx, id, at)
				if rerr != nil || r == nil {
					return nil, fmt.Errorf("fire unblocked job %s: %w", id, err)
				}
				// An earlier unblock fired it; finish what it began.
			}
		}
	}
	now := s.now()
	if _, err := s.store.SetTaskState(ctx, store.TaskStateParams{TaskID: id, State: task.StateRunning, Anchor: now, Now: now}); err != nil {
		return nil, err
	}
	recErr := s.eventNow(ctx, store.JobEvent{JobID: id, At: now, State: task.JobPending, Reason: "unblocked"})
	s.wake()
	if recErr != nil {
		return nil, recErr // unblocked (stored), its transition not yet
	}
	return s.Get(ctx, id)
}

// blockable says why t cannot be blocked or unblocked (verb), nil when
// it can: it is cancelled, its schedule ended, a delayed job's slot fired
// (it ran or is running), or a cron job's run is in progress.
func (s *Service) blockable(ctx context.Context, t *task.Task, verb string) error {
	if t.State == task.StateClosed {
		return conflict(task.CodeAlreadyCancelled, "job %s is cancelled, so it cannot be %s", t.TaskID, verb)
	}
	latest, err := s.latestRun(ctx, t.TaskID)
	if err != nil {
		return err
	}
	if latest != nil && isBlockMarker(latest) {
		return nil // blocked already
	}
	if !t.Job.DueAt.IsZero() {
		if latest != nil {
			return tooLate("job %s already ran (it is %s), so it cannot be %s",
				t.TaskID, task.DeriveJobState(t, latest), verb)
		}
		return nil
	}
	if t.IsDone == 1 {
		return tooLate("job %s is finished (its schedule ended), so it cannot be %s", t.TaskID, verb)
	}
	// A cron job's run in progress does not hold a block back (Block): a
	// queue never empties while slots keep coming, so waiting for one
	// between runs could wait for ever.
	return nil
}

// currentSlot is the slot a block must keep from firing: a delayed job's
// due time; a cron job's next fire, or the first slot of its schedule
// after now when it is not armed (zero when its schedule has ended).
func (s *Service) currentSlot(ctx context.Context, t *task.Task) (time.Time, error) {
	if !t.Job.DueAt.IsZero() {
		return t.Job.DueAt, nil
	}
	if !t.NextFire.IsZero() {
		return t.NextFire, nil
	}
	sched, err := schedule.Parse(t.CronPara, t.TZ)
	if err != nil {
		return time.Time{}, nil // no schedule, no slot to keep
	}
	return fire.NewSlots(t, sched).Next(s.now()), nil
}

// holdSlot takes slot in the ledger with a block marker. It is
// task.ErrConflict (ErrTooLate) when a delayed job's fire took the slot
// first. A cron job's slot that fired, whether its run ended, runs or is
// queued, has passed: the slot after it is taken instead (a few tries).
func (s *Service) holdSlot(ctx context.Context, t *task.Task, slot time.Time) error {
	var slots *fire.Slots
	for range cancelSlotTries {
		now := s.now()
		ok, err := s.store.InsertRun(ctx, &task.Run{
			TriggerID: fire.NewTriggerID(), TaskID: t.TaskID, Slot: slot, Target: task.JobTargetID,
			TriggerType: task.TriggerSchedule, State: task.RunCancelled, FiredAt: now, FinishedAt: now, Error: blockedReason,
		})
		if err != nil || ok {
			return err
		}
		r, err := s.runAt(ctx, t.TaskID, slot)
		if err != nil {
			return err
		}
		switch {
		case r == nil:
			return conflict(task.CodeConflict, "job %s: its slot of %s is taken but no run holds it; try again",
				t.TaskID, slot.UTC().Format(time.RFC3339))
		case isBlockMarker(r):
			return nil // a concurrent block took it
		case !t.Job.DueAt.IsZero():
			return tooLate("job %s fired as it was being blocked (its run is %s), so it cannot be blocked",
				t.TaskID, r.State)
		}
		// A cron job's slot fired: its run, running or queued, began
		// before the block; the stop ends a queued one. Take the slot
		// after it.
		if slots == nil {
			sched, err := schedule.Parse(t.CronPara, t.TZ)
			if err != nil {
				return nil
			}
			ss := fire.NewSlots(t, sched)
			slots = &ss
		}
		if slot = slots.Next(slot); slot.IsZero() || slot.After(s.now().Add(blockGuard)) {
			return nil // no slot close enough to race the block
		}
	}
	return nil
}

// latestRun returns a job's run of the newest slot, nil when it has none.
func (s *Service) latestRun(ctx context.Context, id string) (*task.Run, error) {
	runs, err := s.store.ListRuns(ctx, id, time.Time{}, 1)
	if err != nil {
		return nil, fmt.Errorf("runs of job %s: %w", id, err)
	}
	if len(runs) == 0 {
		return nil, nil
	}
	return runs[0], nil
}

// runAt returns a job's run of slot, nil when the slot has none.
func (s *Service) runAt(ctx context.Context, id string, slot time.Time) (*task.Run, error) {
	runs, err := s.store.ListRuns(ctx, id, slot.Add(time.Millisecond), 1)
	if err != nil {
		return nil, fmt.Errorf("runs of job %s: %w", id, err)
	}
	if len(runs) == 0 || !runs[0].Slot.Equal(slot) {
		return nil, nil
	}
	return runs[0], nil
}

// jobConflict is a 409 of the jobs API: its text alone, matching each of
// errs (task.ErrConflict, and ErrTooLate when it says the job ran).
type jobConflict struct {
	msg  string
	errs []error
}

func (e *jobConflict) Error() string   { return e.msg }
func (e *jobConflict) Unwrap() []error { return e.errs }

// conflict is a task.ErrConflict with code and the text for people.
func conflict(code task.Code, format string, args ...any) error {
	return task.Conflict(code, format, args...)
}

// tooLate is the conflict of a job that already fired: it matches
// ErrTooLate and task.ErrConflict, code task.CodeAlreadyRan.
func tooLate(format string, args ...any) error {
	return task.WithCode(task.CodeAlreadyRan,
		&jobConflict{msg: fmt.Sprintf(format, args...), errs: []error{ErrTooLate, task.ErrConflict}})
}
