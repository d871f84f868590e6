package jobs

import (
	"cmp"
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
// delay from now, unless the service is closed first. A pass the store
// fails is run again (waits from repairRetryFirst doubling to
// repairRetryMax) until one completes: it runs once per start, so a blip
// at that moment would leave a lost end unrepaired until the next one.
// Passes are idempotent (repairJob appends only what is missing).
func (s *Service) repairLater(delay time.Duration, until time.Time) {
	wait := repairRetryFirst
	for {
		select {
		case <-time.After(delay):
		case <-s.ctx.Done():
			return
		}
		n, err := s.RepairFinalEvents(s.ctx, until)
		switch {
		case err != nil && s.ctx.Err() == nil:
			s.logger.Error("restore final job transitions lost by a crash; retrying", "restored", n, "retry_in", wait, "error", err)
		case n > 0:
			s.logger.Warn("restored final job transitions lost by a crash", "jobs", n)
		}
		if err == nil || s.ctx.Err() != nil {
			return
		}
		delay, wait = wait, min(2*wait, repairRetryMax)
	}
}

// Waits between repair passes the store failed (repairLater).
const (
	repairRetryFirst = 500 * time.Millisecond
	repairRetryMax   = time.Minute
)

// finalRunStates are the run states the repair looks for: every final
// kind a job's newest run may end in.
var finalRunStates = [...]task.RunState{task.RunDone, task.RunDead, task.RunRejected, task.RunTimeout, task.RunSkipped,
	task.RunCancelled}

// RepairFinalEvents looks at the jobs whose newest run ended (done, dead,
// rejected, timeout, skipped or cancelled) before until, fired at most
// repairWindow before it, and appends to each job's history the
// transition its end means when the history lacks it (repairJob), handing
// it to the OnEvents subscribers too. It returns how many it appended.
// A cron job's history goes on with its next run, so its runs' ends are
// left out; a cron job met that is closed gets its cancelled transition
// when a kill lost it (repairClosedCron).
//
// The runs are read by state; the first run met of a job stands for the
// job, whose newest run repairJob reads itself: an older run met first
// (a dead run before its backfill's) does not hide the newest one's end.
func (s *Service) RepairFinalEvents(ctx context.Context, until time.Time) (int, error) {
	since := until.Add(-repairWindow)
	seen := map[string]bool{}
	n := 0
	for _, state := range finalRunStates {
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
				if seen[r.TaskID] {
					continue
				}
				seen[r.TaskID] = true
				added, err := s.repairJob(ctx, r.TaskID, since, until)
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

// repairJob appends to job id's history the transition its newest run's
// end means, when that run is final, was fired at or after since and
// ended before until, and the history lacks it (recorded); it reports
// whether it appended.
func (s *Service) repairJob(ctx context.Context, id string, since, until time.Time) (bool, error) {
	t, err := s.store.GetTask(ctx, id)
	switch {
	case errors.Is(err, task.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	case t.Job == nil:
		return false, nil
	case t.CronPara != "":
		return s.repairClosedCron(ctx, t, until)
	}
	latest, err := s.store.ListRuns(ctx, id, time.Time{}, 1)
	if err != nil {
		return false, err
	}
	if len(latest) == 0 {
		return false, nil
	}
	r := latest[0]
	if !r.State.Final() || r.FiredAt.Before(since) || !r.FinishedAt.IsZero() && r.FinishedAt.After(until) {
		return false, nil
	}
	at := r.FinishedAt
	if at.IsZero() {
		at = s.now()
	}
	ev, ok := finalTransition(t, r, at)
	if !ok {
		return false, nil
	}
	history, err := s.store.JobEvents(ctx, id, store.MaxJobEvents)
	if err != nil {
		return false, err
	}
	if recorded(history, r, ev) {
		return false, nil
	}
	if err := s.store.AddJobEvents(ctx, []store.JobEvent{ev}); err != nil {
		return false, err
	}
	s.storedEvent(ev)
	return true, nil
}

// finalTransition is the transition job t's newest run r, final, leaves
// its history ending in; false when there is none to restore. A block's
// marker (a cancelled run holding the slot) means blocked while the job
// is stopped and cancelled once it is closed (a cancel won over the
// block); a marker of a job running again is followed by the unblock's
// fire, so it is nobody's end.
func finalTransition(t *task.Task, r *task.Run, at time.Time) (store.JobEvent, bool) {
	if isBlockMarker(r) {
		switch t.State {
		case task.StateStopped:
			return store.JobEvent{JobID: t.TaskID, At: at, State: task.JobBlocked, Reason: "blocked"}, true
		case task.StateClosed:
			return store.JobEvent{JobID: t.TaskID, At: at, State: task.JobCancelled, Reason: "cancelled"}, true
		}
		return store.JobEvent{}, false
	}
	return transitionOf(t, r, at), true
}

// recorded reports whether history holds ev, the transition of run r's
// end: one with r's trigger id and ev's state; for a cancelled or blocked
// end also one of ev's state without a trigger id, added at or after r
// was fired (a cancel, a replace or a block takes the job's slot with a
// run, then records its transition without the run's id).
func recorded(history []store.JobEvent, r *task.Run, ev store.JobEvent) bool {
	byHand := ev.State == task.JobCancelled || ev.State == task.JobBlocked
	from := r.FiredAt.Truncate(time.Millisecond)
	for _, h := range history {
		if h.State != ev.State {
			continue
		}
		if h.TriggerID == r.TriggerID || byHand && h.TriggerID == "" && !h.At.Before(from) {
			return true
		}
	}
	return false
}

// repairClosedCron appends the cancelled transition of cron job t when t
// was closed before until and its history does not end with it: a cancel
// (or a replace) closes a cron job first and hands its transition over
// after, so a kill in between leaves a job that never fires again and
// reads cancelled, its history ending before it. A closed cron job never
// gets a transition after its cancelled one (stopMu), so a history ending
// otherwise lacks it. The repair finds such a job through its runs, so a
// cron job that ran nothing within repairWindow is not found.
func (s *Service) repairClosedCron(ctx context.Context, t *task.Task, until time.Time) (bool, error) {
	if t.State != task.StateClosed || t.UpdatedAt.After(until) {
		return false, nil // live, or closed since this start: its cancel hands the transition itself
	}
	history, err := s.store.JobEvents(ctx, t.TaskID, store.MaxJobEvents)
	if err != nil {
		return false, err
	}
	if n := len(history); n > 0 && history[n-1].State == task.JobCancelled {
		return false, nil
	}
	why := "cancelled"
	if t.Job.ReplacedBy != "" {
		why = "replaced by " + t.Job.ReplacedBy
	}
	ev := store.JobEvent{JobID: t.TaskID, At: cmp.Or(t.UpdatedAt, s.now()), State: task.JobCancelled, Reason: why}
	if err := s.store.AddJobEvents(ctx, []store.JobEvent{ev}); err != nil {
		return false, err
	}
	s.storedEvent(ev)
	return true, nil
}
