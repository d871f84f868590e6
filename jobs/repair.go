package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// A job's transition is stored by the recorder after its run's change
// is: a process killed in between leaves a job whose run ended (the job
// reads done or dead) and whose history stops before it, and the event
// sink never heard of the end. RepairFinalEvents, run once a while after
// the service starts (Deps.RepairAfter), appends those final transitions,
// and only those missing: it is idempotent, and any node may run it.

// defaultRepairAfter is Deps.RepairAfter's default: longer than a live
// node's recorder takes to store what its runs' ends handed it, so that
// only ends whose transition was lost are found missing.
const defaultRepairAfter = 5 * time.Second

// repairWindow bounds how long before the start the runs the repair looks
// at were fired: a day, the longest ttl, covers the attempts of a run that
// ended at the kill.
const repairWindow = task.MaxTTL

// repairScan bounds the runs of each final state one repair reads.
const repairScan = 20_000

// repairPage is how many runs one read of the repair takes.
const repairPage = 500

// repairLater runs RepairFinalEvents for the runs ended before until,
// delay from now, unless the service is closed first.
func (s *Service) repairLater(delay time.Duration, until time.Time) {
	select {
	case <-time.After(delay):
	case <-s.ctx.Done():
		return
	}
	n, err := s.RepairFinalEvents(s.ctx, until)
	switch {
	case err != nil && s.ctx.Err() == nil:
		s.logger.Error("restore final job transitions lost by a crash", "restored", n, "error", err)
	case n > 0:
		s.logger.Warn("restored final job transitions lost by a crash", "jobs", n)
	}
}

// RepairFinalEvents looks at the jobs whose newest run ended (done, dead,
// rejected, timeout or skipped) before until, fired at most repairWindow
// before it, and appends to each job's history the transition its end
// means when the history lacks it (none with that run's trigger id and
// that state), handing it to the OnEvents subscribers too. It returns how
// many it appended. Cron jobs, whose history goes on with their next run,
// are left out.
func (s *Service) RepairFinalEvents(ctx context.Context, until time.Time) (int, error) {
	since := until.Add(-repairWindow)
	seen := map[string]bool{}
	n := 0
	for _, state := range [...]task.RunState{task.RunDone, task.RunDead, task.RunRejected, task.RunTimeout, task.RunSkipped} {
		cursor := store.RunCursor{}
	pages:
		for scanned := 0; scanned < repairScan; scanned += repairPage {
			runs, err := s.store.QueryRuns(ctx, store.RunQuery{Target: task.JobTargetID, State: state, Before: cursor, Limit: repairPage})
			if err != nil {
				return n, fmt.Errorf("repair job transitions: %w", err)
			}
			for _, r := range runs {
				cursor = store.RunCursor{FiredAt: r.FiredAt, TriggerID: r.TriggerID}
				if r.FiredAt.Before(since) {
					break pages
				}
				if seen[r.TaskID] || !r.FinishedAt.IsZero() && r.FinishedAt.After(until) {
					continue
				}
				seen[r.TaskID] = true
				added, err := s.repairJob(ctx, r)
				if err != nil {
					return n, fmt.Errorf("repair job %s's transitions: %w", r.TaskID, err)
				}
				if added {
					n++
				}
			}
			if len(runs) < repairPage {
				break
			}
		}
	}
	return n, nil
}

// repairJob appends the transition of r's end to its job's history when r
// is the job's newest run and the history lacks it; it reports whether
// it appended.
func (s *Service) repairJob(ctx context.Context, r *task.Run) (bool, error) {
	t, err := s.store.GetTask(ctx, r.TaskID)
	switch {
	case errors.Is(err, task.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	case t.Job == nil || t.CronPara != "":
		return false, nil
	}
	latest, err := s.store.ListRuns(ctx, r.TaskID, time.Time{}, 1)
	if err != nil {
		return false, err
	}
	if len(latest) == 0 || latest[0].TriggerID != r.TriggerID || !latest[0].State.Final() {
		return false, nil
	}
	at := r.FinishedAt
	if at.IsZero() {
		at = s.now()
	}
	ev := transitionOf(t, latest[0], at)
	history, err := s.store.JobEvents(ctx, r.TaskID, store.MaxJobEvents)
	if err != nil {
		return false, err
	}
	for _, h := range history {
		if h.TriggerID == ev.TriggerID && h.State == ev.State {
			return false, nil
		}
	}
	if err := s.store.AddJobEvents(ctx, []store.JobEvent{ev}); err != nil {
		return false, err
	}
	s.storedEvent(ev)
	return true, nil
}
