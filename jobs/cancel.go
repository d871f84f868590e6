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

// ErrTooLate is wrapped by Cancel when the job already fired.
var ErrTooLate = errors.New("the job already fired")

// Cancel cancels a job that has not fired: exactly one of cancelled and
// fired wins, through the fire ledger (a cancel takes the job's slot the
// way a fire does). A cron job stops for good (cancelCron). A job that
// already fired is task.ErrConflict wrapping ErrTooLate.
//
// A delayed job's cancel is decided by its first write, the slot taken:
// once the slot is held, the job's one fire finds it taken and sends
// nothing, so a crash before the close leaves a job that never runs and
// reads cancelled (its newest run is the cancel's). The close and the
// transition follow.
func (s *Service) Cancel(ctx context.Context, id string) (*View, error) {
	t, err := s.jobTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.State == task.StateClosed {
		return nil, conflict(task.CodeAlreadyCancelled, "job %s is already cancelled or replaced", id)
	}
	if t.Job.DueAt.IsZero() {
		return s.cancelCron(ctx, t)
	}
	ok, err := s.cancelSlot(ctx, t, "cancelled")
	if err != nil {
		return nil, err
	}
	if !ok {
		v, gerr := s.Get(ctx, id)
		state := task.JobRunning
		if gerr == nil {
			state = v.State
		}
		return nil, tooLate("job %s already fired (it is %s), so it cannot be cancelled", id, state)
	}
	s.stopMu.Lock()
	if _, err := s.store.SetTaskState(ctx, store.TaskStateParams{TaskID: id, State: task.StateClosed, Now: s.now()}); err != nil {
		s.stopMu.Unlock()
		return nil, err
	}
	// The job is closed (stored) whether or not its transition is stored
	// in time: the answer says which (ErrNotRecorded when not yet).
	recErr := s.eventNow(ctx, store.JobEvent{JobID: id, At: s.now(), State: task.JobCancelled, Reason: "cancelled"})
	s.stopMu.Unlock()
	return s.cancelled(ctx, id, recErr)
}

// cancelCron cancels cron job t. Its first write is the close: stored, it
// stops the job on every node for good (the close releases the task's
// claim, so the node that armed it disarms it, and no node arms a closed
// task), and the job reads cancelled. Only then is its current slot taken
// in the ledger, so that a fire that read the job running before the
// close either delivered that slot already or finds it taken; and then
// the cancelled transition is handed over.
//
// A process killed (or a store failing) after the close leaves a job
// that never fires again, the client unanswered or told an error, and a
// retry of the cancel answers that it is cancelled already. The other
// order, the slot taken first, left a job whose newest run read cancelled
// while its later slots went on firing. A transition lost by a kill is
// appended by the repair (repairJob).
//
// An answer of cancelled means all three are stored. When the slot could
// not be taken the answer is that error: the job is cancelled, but a fire
// that read it running may still deliver its current slot.
func (s *Service) cancelCron(ctx context.Context, t *task.Task) (*View, error) {
	id := t.TaskID
	s.stopMu.Lock()
	if _, err := s.store.SetTaskState(ctx, store.TaskStateParams{TaskID: id, State: task.StateClosed, Now: s.now()}); err != nil {
		s.stopMu.Unlock()
		return nil, err
	}
	var slotErr error
	if _, err := s.cancelSlot(ctx, t, "cancelled"); err != nil {
		slotErr = fmt.Errorf("job %s is cancelled, but its current slot could not be taken from a fire "+
			"racing the cancel: %w", id, err)
	}
	recErr := s.eventNow(ctx, store.JobEvent{JobID: id, At: s.now(), State: task.JobCancelled, Reason: "cancelled"})
	s.stopMu.Unlock()
	if slotErr != nil {
		recErr = errors.Join(slotErr, recErr)
	}
	return s.cancelled(ctx, id, recErr)
}

// cancelled wakes what waits on job id once its cancel is stored and
// answers it: err, or the job as stored.
func (s *Service) cancelled(ctx context.Context, id string, err error) (*View, error) {
	s.wake()
	s.wakeWaiters(id)
	s.announce(id)
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, id)
}

// cancelSlot takes a pending delayed job's slot in the ledger with a
// cancelled run, so its fire finds the slot taken and sends nothing. It
// reports false when the slot was already fired. A cron job's current slot
// is taken the same way, so a fire racing the cancel either delivers that
// slot or finds it cancelled, never both: the current slot is its next
// fire when that is still free, else the first free slot of its schedule
// after it (its next fire may be stale, already fired, or not set yet
// when the job is not armed); the cron job reports true either way
// (closing it stops the slots after).
func (s *Service) cancelSlot(ctx context.Context, t *task.Task, why string) (bool, error) {
	now := s.now()
	take := func(slot time.Time) (bool, error) {
		return s.store.InsertRun(ctx, &task.Run{
			TriggerID: fire.NewTriggerID(), TaskID: t.TaskID, Slot: slot, Target: task.JobTargetID,
			TriggerType: task.TriggerSchedule, State: task.RunCancelled, FiredAt: now, FinishedAt: now, Error: why,
		})
	}
	if !t.Job.DueAt.IsZero() {
		ok, err := take(t.Job.DueAt)
		if ok || err != nil {
			return ok, err
		}
		// A block holds the slot: the cancel wins when nothing fired
		// since, i.e. the job's newest run is still the block's marker (an
		// unblock or a backfill fires it under a later slot of its own).
		r, err := s.latestRun(ctx, t.TaskID)
		return r != nil && isBlockMarker(r), err
	}
	slot := t.NextFire
	if !slot.IsZero() {
		if ok, err := take(slot); ok || err != nil {
			return true, err
		}
	}
	sched, err := schedule.Parse(t.CronPara, t.TZ)
	if err != nil {
		return true, nil // no schedule to take a slot of: closing it is enough
	}
	slots := fire.NewSlots(t, sched)
	after := now
	if slot.After(after) {
		after = slot
	}
	for range cancelSlotTries {
		next := slots.Next(after)
		if next.IsZero() {
			return true, nil // the schedule has ended
		}
		if ok, err := take(next); ok || err != nil {
			return true, err
		}
		after = next // fired meanwhile: the one after
	}
	return true, nil
}

// cancelSlotTries bounds the slots a cron job's cancel tries to take.
const cancelSlotTries = 3
