package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/task"
)

// OnRun records the transition a stored run change means for its job (the
// firer calls it through fire.Config.OnRun) and wakes those waiting on
// the job. Runs of row tasks are ignored. It blocks only when eventBuffer
// transitions wait to be stored.
func (s *Service) OnRun(t *task.Task, r task.Run) {
	if t.Job == nil {
		return
	}
	ev := store.JobEvent{JobID: t.TaskID, At: s.now(), TriggerID: r.TriggerID, Attempt: r.Attempt, Reason: r.Error}
	switch r.State {
	case task.RunRunning, task.RunPending:
		ev.State = task.JobRunning
		if r.TriggerType == task.TriggerBackfill {
			ev.State = task.JobBackfilling
		}
		ev.Reason = string(r.TriggerType)
	case task.RunAccepted:
		ev.State, ev.Reason = task.JobRunning, "accepted; waiting for feedback"
	case task.RunFailed:
		ev.State = task.JobFailed
		ev.Reason = fmt.Sprintf("attempt %d failed, retry at %s: %s", r.Attempt, r.NextAttempt.Format(time.RFC3339Nano), r.Error)
	case task.RunDone:
		ev.State = task.JobDone
		if t.CronPara != "" {
			ev.State = task.JobPending
		}
		ev.Reason = task.Truncate(r.Output, 200)
	default: // dead, rejected, timeout
		ev.State = task.JobDead
		if t.CronPara != "" {
			ev.State = task.JobPending
		}
		ev.Reason = fmt.Sprintf("%s: %s", r.State, r.Error)
	}
	s.event(ev)
	if r.State.Final() {
		s.wakeWaiters(t.TaskID)
		s.announce(t.TaskID)
	}
}

// transition is a job transition handed to the recorder. stored says it
// is in the store already (written with its new job, by
// store.Jobs.CreateJobs): the recorder only passes it on to the
// OnEvents subscribers, in order with the others.
type transition struct {
	ev     store.JobEvent
	stored bool
}

// event hands ev to the recorder, to be stored.
func (s *Service) event(ev store.JobEvent) { s.handOver(transition{ev: ev}) }

// storedEvent hands ev, stored already, to the recorder for the OnEvents
// subscribers.
func (s *Service) storedEvent(ev store.JobEvent) { s.handOver(transition{ev: ev, stored: true}) }

func (s *Service) handOver(tr transition) {
	select {
	case s.events <- tr:
	case <-s.done:
		s.logger.Warn("job transition not recorded: shutting down", "job_id", tr.ev.JobID, "state", tr.ev.State,
			"stored", tr.stored)
	}
}

// recordEvents stores transitions in batches until Close, then stores
// what is left; each batch (with the transitions stored already) is
// handed to the OnEvents subscribers too.
func (s *Service) recordEvents() {
	batch := make([]transition, 0, maxEventBatch)
	evs := make([]store.JobEvent, 0, maxEventBatch)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		evs = evs[:0]
		for _, tr := range batch {
			if !tr.stored {
				evs = append(evs, tr.ev)
			}
		}
		for attempt := range 3 {
			if len(evs) == 0 {
				break
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := s.store.AddJobEvents(ctx, evs)
			cancel()
			if err == nil {
				break
			}
			s.logger.Error("store job transitions", "n", len(evs), "attempt", attempt+1, "error", err)
			time.Sleep(100 * time.Millisecond << attempt)
		}
		s.mu.Lock()
		subs := slices.Clone(s.stored)
		s.mu.Unlock()
		if len(subs) > 0 {
			all := make([]store.JobEvent, len(batch))
			for i, tr := range batch {
				all[i] = tr.ev
			}
			for _, fn := range subs {
				fn(slices.Clone(all))
			}
		}
		batch = batch[:0]
	}
	for {
		select {
		case tr := <-s.events:
			batch = append(batch, tr)
			for len(batch) < cap(batch) {
				select {
				case tr := <-s.events:
					batch = append(batch, tr)
					continue
				default:
				}
				break
			}
			flush()
		case <-s.done:
			for {
				select {
				case tr := <-s.events:
					batch = append(batch, tr)
				default:
					flush()
					return
				}
			}
		}
	}
}

// Backfill re-runs chosen dead or cancelled jobs (trigger type backfill)
// in the background, at most BackfillRate per second; their state shows
// backfilling, then done or dead.
func (s *Service) Backfill(ctx context.Context, req BackfillRequest) (*BackfillAnswer, error) {
	if req.Limit < 0 || req.Limit > MaxBackfill {
		return nil, task.Invalid("limit", "must be 0 to %d", MaxBackfill)
	}
	if req.Limit == 0 {
		req.Limit = MaxBackfill
	}
	if len(req.IDs) > MaxBackfill {
		return nil, task.Invalid("ids", "at most %d", MaxBackfill)
	}
	ids := req.IDs
	if len(ids) == 0 {
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
		for _, v := range views {
			ids = append(ids, v.ID)
		}
	}
	ans := &BackfillAnswer{Accepted: []string{}, Refused: map[string]string{}, Rate: s.rate}
	for _, id := range ids {
		v, err := s.Get(ctx, id)
		switch {
		case errors.Is(err, task.ErrNotFound):
			ans.Refused[id] = "no such job"
		case err != nil:
			return nil, err
		case v.State != task.JobDead && v.State != task.JobCancelled:
			ans.Refused[id] = fmt.Sprintf("job is %s; backfill re-runs dead or cancelled jobs", v.State)
		default:
			ans.Accepted = append(ans.Accepted, id)
		}
	}
	if len(ans.Accepted) > 0 {
		accepted := append([]string(nil), ans.Accepted...)
		s.background(func() { s.runBackfill(accepted) })
	}
	return ans, nil
}

// runBackfill triggers each job, paced at s.rate per second.
func (s *Service) runBackfill(ids []string) {
	tick := time.NewTicker(time.Duration(float64(time.Second) / s.rate))
	defer tick.Stop()
	for i, id := range ids {
		if i > 0 {
			select {
			case <-tick.C:
			case <-s.ctx.Done():
				return
			}
		}
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		_, err := s.trigger(ctx, fire.TriggerParams{TaskID: id, At: s.now(), Type: task.TriggerBackfill})
		cancel()
		if err != nil {
			s.logger.Error("backfill", "job_id", id, "error", err)
			s.event(store.JobEvent{JobID: id, At: s.now(), State: task.JobDead, Reason: "backfill failed: " + err.Error()})
		}
	}
}

// maxJobScan bounds the jobs one List call of pending or blocked jobs
// reads; a page may come back short, with a cursor to go on from.
const maxJobScan = 10_000

// matches reports whether v passes q's filters.
func matches(q *ListQuery, v *View) bool {
	return v.State == q.State && (q.Method == "" || v.Method == q.Method) &&
		(q.Name == "" || strings.Contains(v.Name, q.Name))
}

// runStateOf returns the run state whose runs may belong to jobs in state js.
func runStateOf(js task.JobState) (task.RunState, error) {
	switch js {
	case task.JobDead:
		return task.RunDead, nil
	case task.JobCancelled:
		return task.RunCancelled, nil
	case task.JobFailed:
		return task.RunFailed, nil
	case task.JobRunning, task.JobBackfilling:
		return task.RunRunning, nil
	case task.JobDone:
		return task.RunDone, nil
	}
	return "", task.Invalid("state", "must be pending, blocked, running, backfilling, failed, done, dead or cancelled; got %q",
		task.Truncate(string(js), 40))
}

// List returns jobs whose newest run puts them in q.State (dead letters
// with State dead), newest first, and the cursor of the next page (zero on
// the last).
func (s *Service) List(ctx context.Context, q ListQuery) ([]*View, store.RunCursor, error) {
	if q.Limit <= 0 || q.Limit > MaxBackfill {
		q.Limit = 100
	}
	if q.State == task.JobPending || q.State == task.JobBlocked {
		return s.listByJob(ctx, q)
	}
	rs, err := runStateOf(q.State)
	if err != nil {
		return nil, store.RunCursor{}, err
	}
	var out []*View
	cursor := q.Cursor
	seen := map[string]bool{}
	for len(out) < q.Limit {
		runs, err := s.store.QueryRuns(ctx, store.RunQuery{Target: task.JobTargetID, State: rs, Before: cursor, Limit: q.Limit})
		if err != nil {
			return nil, store.RunCursor{}, err
		}
		for _, r := range runs {
			cursor = store.RunCursor{FiredAt: r.FiredAt, TriggerID: r.TriggerID}
			if seen[r.TaskID] {
				continue
			}
			seen[r.TaskID] = true
			t, err := s.store.GetTask(ctx, r.TaskID)
			if errors.Is(err, task.ErrNotFound) || err == nil && t.Job == nil {
				continue
			}
			if err != nil {
				return nil, store.RunCursor{}, err
			}
			latest, err := s.store.ListRuns(ctx, r.TaskID, time.Time{}, 1)
			if err != nil {
				return nil, store.RunCursor{}, err
			}
			if v := viewOf(t, latest); matches(&q, v) {
				out = append(out, v)
				if len(out) == q.Limit {
					return out, cursor, nil
				}
			}
		}
		if len(runs) < q.Limit {
			return out, store.RunCursor{}, nil
		}
	}
	return out, cursor, nil
}

// listByJob does List for the states a job may be in without any run
// (pending, blocked): it walks the jobs newest first and keeps those whose
// state and filters match, reading at most maxJobScan jobs per call.
func (s *Service) listByJob(ctx context.Context, q ListQuery) ([]*View, store.RunCursor, error) {
	after := store.JobCursor{CreatedAt: q.Cursor.FiredAt, TaskID: q.Cursor.TriggerID}
	next := func() store.RunCursor { return store.RunCursor{FiredAt: after.CreatedAt, TriggerID: after.TaskID} }
	batch := min(q.Limit, store.MaxListJobs)
	var out []*View
	for scanned := 0; scanned < maxJobScan; {
		ts, err := s.store.ListJobs(ctx, store.ListJobsParams{After: after, Limit: batch})
		if err != nil {
			return nil, store.RunCursor{}, err
		}
		for _, t := range ts {
			after = store.JobCursor{CreatedAt: t.CreatedAt, TaskID: t.TaskID}
			scanned++
			latest, err := s.store.ListRuns(ctx, t.TaskID, time.Time{}, 1)
			if err != nil {
				return nil, store.RunCursor{}, err
			}
			if v := viewOf(t, latest); matches(&q, v) {
				out = append(out, v)
				if len(out) == q.Limit {
					return out, next(), nil
				}
			}
		}
		if len(ts) < batch {
			return out, store.RunCursor{}, nil
		}
	}
	return out, next(), nil
}
