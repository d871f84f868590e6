package jobs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/task"
)

// Refusals of a backfill's answer (BackfillAnswer.Refused).
const (
	refusedUnknown = "no such job"
	refusedQueued  = "already queued for backfill by an earlier request; it runs once"
)

// backfillItem is one job a backfill re-runs, at its backfill slot; run
// is the trigger id of the run the request retries ("" when it named
// none).
type backfillItem struct {
	id   string
	run  string
	slot time.Time
}

// Backfill re-runs chosen dead or cancelled jobs (trigger type backfill)
// in the background, at most BackfillRate per second for the whole
// service (every request's backfills together, backfillPace); their
// state shows backfilling, then done or dead.
//
// A backfill retries one run of each job, and that run is re-run once,
// however many requests ask for it: the run the request names
// (req.Runs), which must still be the job's newest; or, when it names
// none, the job's newest run unless that is itself a backfill's re-run
// (re-running a re-run needs its name: a request that read the job before
// an earlier backfill's re-run ended would otherwise start another; see
// backfillable). ids are taken once each; a job a backfill of this node
// has reserved and not yet fired is refused (refusedQueued), and one
// that fired is backfilling or running, which is refused too. Across
// nodes, and for a request that read the job before a re-run fired, the
// ledger decides: the re-run of a run fires at that run's backfill slot
// (backfillSlot), the same for every request retrying that run, and the
// ledger's key (task_id, slot, target) lets one fire of a slot through on
// either driver, so any other backfill of that run finds the slot taken
// and sends nothing.
func (s *Service) Backfill(ctx context.Context, req BackfillRequest) (*BackfillAnswer, error) {
	ids, err := s.backfillIDs(ctx, req)
	if err != nil {
		return nil, err
	}
	ans := &BackfillAnswer{Accepted: []string{}, Refused: map[string]string{}, Rate: s.rate}
	var queue []backfillItem
	for _, id := range ids {
		// Reserve the job before reading it: a backfill that reserves it
		// after an earlier one's trigger reads the job with that trigger's
		// run, and one that tries before is refused as queued.
		if !s.queueBackfill(id) {
			ans.Refused[id] = refusedQueued
			continue
		}
		it := backfillItem{id: id, run: req.Runs[id]}
		why, err := s.backfillable(ctx, &it)
		switch {
		case err != nil:
			s.unqueue(append(queue, it))
			return nil, err
		case why != "":
			s.unqueue([]backfillItem{it})
			ans.Refused[id] = why
		default:
			ans.Accepted = append(ans.Accepted, id)
			queue = append(queue, it)
		}
	}
	if len(queue) > 0 && !s.background(func() { s.runBackfill(queue) }) {
		s.unqueue(queue)
	}
	return ans, nil
}

// backfillable reads job it.id and says why it cannot be backfilled ("" when
// it can, with it.slot set to its backfill slot).
func (s *Service) backfillable(ctx context.Context, it *backfillItem) (string, error) {
	v, err := s.Get(ctx, it.id)
	switch {
	case errors.Is(err, task.ErrNotFound):
		return refusedUnknown, nil
	case err != nil:
		return "", err
	case v.State != task.JobDead && v.State != task.JobCancelled:
		return fmt.Sprintf("job is %s; backfill re-runs dead or cancelled jobs", v.State), nil
	case v.Run != nil && !v.Run.State.Final():
		// A cancelled cron job reads cancelled while a backfill runs.
		return fmt.Sprintf("its run of %s is %s (a backfill in progress); backfill it once that run ends",
			v.Run.Slot.UTC().Format(time.RFC3339Nano), v.Run.State), nil
	case it.run != "" && (v.Run == nil || v.Run.TriggerID != it.run):
		return notNewest(it.run, v.Run), nil
	case it.run == "" && v.Run != nil && v.Run.TriggerType == task.TriggerBackfill:
		return fmt.Sprintf("its newest run %s is a backfill's re-run, which ended %s; a backfill re-runs it again "+
			"only when it names that run (\"runs\": {%q: %q})", v.Run.TriggerID, v.Run.State, v.ID, v.Run.TriggerID), nil
	}
	it.slot = backfillSlot(v)
	return "", nil
}

// notNewest is why a backfill naming run is refused when newest (nil:
// none) is the job's newest run: the named run was re-run already (by
// newest, or a run before it), or the job has no such run.
func notNewest(run string, newest *task.Run) string {
	if newest == nil {
		return fmt.Sprintf("the job has no run %s to re-run", run)
	}
	return fmt.Sprintf("run %s is not its newest run: %s is (%s, %s); a run is re-run once — name %s to re-run the job again",
		run, newest.TriggerID, newest.TriggerType, newest.State, newest.TriggerID)
}

// backfillIDs returns the jobs req chooses, each once: its ids and the
// jobs its runs name, or the newest jobs in its state (dead by default).
func (s *Service) backfillIDs(ctx context.Context, req BackfillRequest) ([]string, error) {
	if req.Limit < 0 || req.Limit > MaxBackfill {
		return nil, task.Invalid("limit", "must be 0 to %d", MaxBackfill)
	}
	if req.Limit == 0 {
		req.Limit = MaxBackfill
	}
	if len(req.IDs) > MaxBackfill {
		return nil, task.Invalid("ids", "at most %d", MaxBackfill)
	}
	if len(req.Runs) > MaxBackfill {
		return nil, task.Invalid("runs", "at most %d", MaxBackfill)
	}
	if len(req.IDs) > 0 || len(req.Runs) > 0 {
		seen := make(map[string]bool, len(req.IDs)+len(req.Runs))
		ids := make([]string, 0, len(req.IDs)+len(req.Runs))
		for _, id := range append(slices.Clone(req.IDs), slices.Sorted(maps.Keys(req.Runs))...) {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if len(ids) > MaxBackfill {
			return nil, task.Invalid("ids", "at most %d jobs with runs", MaxBackfill)
		}
		return ids, nil
	}
	state := req.State
	if state == "" {
		state = task.JobDead
	}
	if state != task.JobDead && state != task.JobCancelled {
		return nil, task.Invalid("state", "backfill takes dead or cancelled jobs; got %q", state)
	}
	views, _, err := s.List(ctx, ListQuery{State: state, Method: req.Method, Name: req.Name, Limit: req.Limit})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(views))
	for i, v := range views {
		ids[i] = v.ID
	}
	return ids, nil
}

// backfillSlot is the slot a backfill of job v fires at: a millisecond
// after its newest run's slot (the run it retries, which made it dead or
// cancelled), so that every backfill retrying that run takes the same
// slot and the ledger lets one through. A schedule's slots are whole
// seconds and a delayed job has one, so the slot is never one the
// schedule fires. A job without a run (cancelled before it was armed)
// retries its creation: its created instant, the same for every request.
func backfillSlot(v *View) time.Time {
	if v.Run == nil {
		return v.CreatedAt.Truncate(time.Millisecond)
	}
	return v.Run.Slot.Add(time.Millisecond)
}

// queueBackfill reserves job id for a backfill of this node until its
// trigger is answered (or the backfill refuses it); false when another
// holds it.
func (s *Service) queueBackfill(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.backfills[id] {
		return false
	}
	s.backfills[id] = true
	return true
}

// unqueue forgets the queued backfills of items.
func (s *Service) unqueue(items []backfillItem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range items {
		delete(s.backfills, it.id)
	}
}

// backfillPace spaces the backfill triggers of a whole service, however
// many requests run at once, every apart (1/BackfillRate): each trigger
// takes the first free instant and waits for it. It paces one node; nodes
// do not share it.
type backfillPace struct {
	mu    sync.Mutex
	every time.Duration
	next  time.Time // the first free instant
}

// take reserves the first free instant at or after now and returns it.
func (p *backfillPace) take(now time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(p.every)
	return at
}

// paced waits for the service's next free backfill instant (backfillPace);
// false when the service closed first.
func (s *Service) paced() bool {
	wait := time.Until(s.pace.take(time.Now()))
	if wait <= 0 {
		return s.ctx.Err() == nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// runBackfill triggers each job at its backfill slot, each when the
// service's pace lets it (at most s.rate per second with every other
// backfill of the service); each is unqueued once its trigger is answered
// (a job whose backfill fired reads backfilling, which a backfill
// refuses).
func (s *Service) runBackfill(items []backfillItem) {
	// items[next:] are still queued; those left when the service closes
	// are unqueued on the way out.
	next := 0
	defer func() { s.unqueue(items[next:]) }()
	for i, it := range items {
		if !s.paced() {
			return
		}
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		_, err := s.trigger(ctx, fire.TriggerParams{TaskID: it.id, At: it.slot, Type: task.TriggerBackfill})
		cancel()
		s.unqueue(items[i : i+1])
		next = i + 1
		switch {
		case err == nil:
		case errors.Is(err, task.ErrConflict):
			// The slot is taken: another node's backfill of the job fired it.
			s.logger.Info("backfill fired already", "job_id", it.id, "slot", it.slot, "error", err)
		default:
			s.logger.Error("backfill", "job_id", it.id, "error", err)
			s.event(store.JobEvent{JobID: it.id, At: s.now(), State: task.JobDead, Reason: "backfill failed: " + err.Error()})
		}
	}
}
