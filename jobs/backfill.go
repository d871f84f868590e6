package jobs

import (
	"context"
	"errors"
	"fmt"
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

// backfillItem is one job a backfill re-runs, at its backfill slot.
type backfillItem struct {
	id   string
	slot time.Time
}

// Backfill re-runs chosen dead or cancelled jobs (trigger type backfill)
// in the background, at most BackfillRate per second for the whole
// service (every request's backfills together, backfillPace); their
// state shows backfilling, then done or dead.
//
// A backfill of a job runs once, however many requests ask for it: ids
// are taken once each; a job a backfill of this node has reserved and not
// yet fired is refused (refusedQueued), and one that fired is backfilling
// or running, which is refused too. Across nodes the ledger decides: a
// job's backfill fires at its backfill slot (backfillSlot), the same for
// every request that finds the job in the same state, and the ledger's
// key (task_id, slot, target) lets one fire of a slot through on either
// driver, so a second node's backfill of the job finds the slot taken
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
		it := backfillItem{id: id}
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
	}
	it.slot = backfillSlot(v, s.now())
	return "", nil
}

// backfillIDs returns the jobs req chooses, each once: its ids, or the
// newest jobs in its state (dead by default).
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
	if len(req.IDs) > 0 {
		seen := make(map[string]bool, len(req.IDs))
		ids := make([]string, 0, len(req.IDs))
		for _, id := range req.IDs {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
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
// after its newest run's slot (which made it dead or cancelled), so that
// every backfill of the job in that state takes the same slot and the
// ledger lets one through. A schedule's slots are whole seconds and a
// delayed job has one, so the slot is never one the schedule fires. A job
// without a run (cancelled before it was armed) has no such slot: now.
func backfillSlot(v *View, now time.Time) time.Time {
	if v.Run == nil {
		return now.Truncate(time.Millisecond)
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
