package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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
	ev := transitionOf(t, &r, s.now())
	if t.CronPara != "" && r.State.Final() && (ev.State == task.JobPending || ev.State == task.JobCancelled) {
		s.stopMu.RLock()
		switch stop, ok := s.stoppedMeanwhile(t.TaskID, ev.State); {
		case ok && stop == "": // the job is gone: no history to add to
		case ok:
			// The run's end is kept in the history, under the job's stop
			// (a backfill's run too: its backfilling transition is
			// followed by one saying how it ended).
			ev.Reason = task.Truncate(fmt.Sprintf("run %s ended %s (%s); the job stays %s", r.TriggerID, r.State, ev.Reason, stop), 300)
			ev.State = stop
			s.event(ev)
		default:
			s.event(ev)
		}
		s.stopMu.RUnlock()
	} else {
		s.event(ev)
	}
	if r.State.Final() {
		s.wakeWaiters(t.TaskID)
		s.announce(t.TaskID)
	}
}

// stoppedMeanwhile reports whether the transition to state that a final
// run of cron job id means would undo the job's stop — pending after the
// job was closed (cancelled or replaced) or stopped (blocked), or
// cancelled (a queued run ended undelivered) after it was blocked — and
// the state the job stays in (none when the job is gone). The run's outcome is in the ledger either
// way; the job's history ends at its stop. The task the firer passed may
// have been read at fire time, so the store is asked; when it cannot say,
// the transition is recorded as the run means it (the run's outcome is not
// lost from the history).
func (s *Service) stoppedMeanwhile(id string, state task.JobState) (task.JobState, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cur, err := s.store.GetTask(ctx, id)
	if errors.Is(err, task.ErrNotFound) {
		return "", true
	}
	if err != nil {
		s.logger.Warn("read job state for its run's end", "job_id", id, "error", err)
		return "", false
	}
	switch {
	case cur.State == task.StateStopped:
		return task.JobBlocked, true
	case cur.State == task.StateClosed && state == task.JobPending:
		return task.JobCancelled, true
	}
	return "", false
}

// transitionOf is the transition of job t that run r's change (stored at
// at) means.
func transitionOf(t *task.Task, r *task.Run, at time.Time) store.JobEvent {
	ev := store.JobEvent{JobID: t.TaskID, At: at, TriggerID: r.TriggerID, Attempt: r.Attempt, Reason: r.Error}
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
	case task.RunCancelled: // a run ended by hand (POST /api/v1/runs/{id}/cancel)
		ev.State = task.JobCancelled
		ev.Reason = "run cancelled: " + r.Error
	default: // dead, rejected, timeout, skipped
		ev.State = task.JobDead
		if t.CronPara != "" {
			ev.State = task.JobPending
		}
		ev.Reason = fmt.Sprintf("%s: %s", r.State, r.Error)
	}
	return ev
}

// transition is a job transition handed to the recorder. stored says it
// is in the store already (written with its new job, by
// store.Jobs.CreateJobs): the recorder only passes it on to the
// OnEvents subscribers, in order with the others.
type transition struct {
	ev     store.JobEvent
	stored bool
	// written, when set, is closed once the recorder has written the
	// batch holding ev (and every transition handed over before it).
	written chan struct{}
}

// event hands ev to the recorder, to be stored.
func (s *Service) event(ev store.JobEvent) { s.handOver(transition{ev: ev}) }

// eventNow hands ev to the recorder and returns nil once it is stored, so
// that a transition the API answers (a cancel, a block, an unblock, a
// replace) is durable with its answer, and stored after every transition
// handed over before it (a run's end that read the job before a cancel
// stays before the cancel in the history). When ctx ends (or
// answerWithin passes) or the service closes first it returns
// ErrNotRecorded: the caller's state change is
// stored and the transition is not yet; the recorder goes on writing it
// (storeEvents), so the history catches up with the state, and a client
// is told no more than what is stored.
func (s *Service) eventNow(ctx context.Context, ev store.JobEvent) error {
	ctx, cancel := context.WithTimeout(ctx, answerWithin)
	defer cancel()
	tr := transition{ev: ev, written: make(chan struct{})}
	s.handOver(tr)
	select {
	case <-tr.written:
		return nil
	case <-ctx.Done():
		return notRecorded(ev, ctx.Err())
	case <-s.done:
		return notRecorded(ev, errors.New("the service is shutting down"))
	}
}

// answerWithin bounds how long eventNow waits for its transition to be
// stored when the request sets no earlier deadline: the answer (then
// ErrNotRecorded) comes well within the HTTP server's write timeout, and
// a cancel or block holds stopMu no longer than that while the store
// fails.
const answerWithin = 20 * time.Second

// ErrNotRecorded is wrapped by the error of a cancel, block, unblock or
// replace whose change of state is stored but whose transition in the
// job's history was not stored before the request ended (the store
// failed meanwhile). The error carries task.CodeServiceUnavailable: try
// again later (reading the job shows its state).
var ErrNotRecorded = errors.New("the job's transition is not stored yet")

// notRecorded is the error of transition ev not known stored, for why.
func notRecorded(ev store.JobEvent, why error) error {
	return task.WithCode(task.CodeServiceUnavailable, fmt.Errorf(
		"job %s is %s, but that transition is not in its history yet (%w: %w); it is being retried",
		ev.JobID, ev.State, ErrNotRecorded, why))
}

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
// handed to the OnEvents subscribers too, once it is stored (storeEvents):
// a transition the store has not taken is neither reported written to
// eventNow nor passed on.
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
		if !s.storeEvents(evs) {
			// Closed, and the store still fails: these are lost from the
			// history (a lost final end is restored by the next start's
			// RepairFinalEvents). Nobody is told they were written.
			s.logger.Error("job transitions not stored: the service closed while the store failed", "n", len(evs))
			batch = batch[:0]
			return
		}
		for _, tr := range batch {
			if tr.written != nil {
				close(tr.written)
			}
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
					if len(batch) == cap(batch) {
						flush()
					}
				default:
					flush()
					return
				}
			}
		}
	}
}

// Retries of the recorder's writes (storeEvents): the first waits
// eventRetryFirst, each next one twice as long, at most eventRetryMax.
// After Close they go on for closeStoreFor at most.
const (
	eventRetryFirst = 50 * time.Millisecond
	eventRetryMax   = 5 * time.Second
	eventWriteFor   = 10 * time.Second // one write's timeout
	closeStoreFor   = 10 * time.Second
)

// storeEvents writes evs, retrying until they are stored: while the
// service runs the recorder does nothing else (its buffer, eventBuffer,
// then holds back whoever records a transition, so the queue is bounded
// and nothing is dropped). A failed write may have been stored anyway
// (the error can hide a commit): before writing again, the events the
// store holds already are left out (notStoredYet), so a retry stores
// each once. It returns false only when the service closed and the store
// kept failing until closeStoreFor after the recorder first saw it closed
// (one bound for all the batches left, s.closeBy).
func (s *Service) storeEvents(evs []store.JobEvent) bool {
	done := s.done
	var giveUp <-chan time.Time
	if !s.closeBy.IsZero() {
		done, giveUp = nil, time.After(time.Until(s.closeBy))
	}
	wait := eventRetryFirst
	unknown := false // a write failed: some of evs may be stored
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), eventWriteFor)
		var err error
		if unknown {
			evs, err = s.notStoredYet(ctx, evs)
		}
		if err == nil && len(evs) > 0 {
			if err = s.store.AddJobEvents(ctx, evs); err != nil {
				unknown = true
			}
		}
		cancel()
		if err == nil {
			return true
		}
		s.logger.Error("store job transitions; retrying", "n", len(evs), "attempt", attempt, "retry_in", wait, "error", err)
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-done:
			s.closeBy = time.Now().Add(closeStoreFor)
			done, giveUp = nil, time.After(closeStoreFor)
			timer.Stop()
		case <-giveUp:
			timer.Stop()
			return false
		}
		wait = min(2*wait, eventRetryMax)
	}
}

// eventKey identifies a transition in a job's history as the store keeps
// it (instants to the millisecond).
type eventKey struct {
	job, trigger, reason string
	state                task.JobState
	at                   int64
	attempt              int
}

func keyOf(ev *store.JobEvent) eventKey {
	return eventKey{job: ev.JobID, trigger: ev.TriggerID, reason: ev.Reason, state: ev.State,
		at: ev.At.UnixMilli(), attempt: ev.Attempt}
}

// notStoredYet returns those of evs their jobs' histories do not hold:
// after a write whose outcome is unknown, the ones it stored are left out
// of the next (one read per job, on this error path only). Each stored
// transition accounts for one of evs with the same fields, so two equal
// transitions of which one is stored leave the other. A job with more
// than store.MaxJobEvents transitions is read up to that: one of its
// later ones may then be stored twice, never lost.
func (s *Service) notStoredYet(ctx context.Context, evs []store.JobEvent) ([]store.JobEvent, error) {
	have := map[eventKey]int{}
	read := map[string]bool{}
	for i := range evs {
		id := evs[i].JobID
		if read[id] {
			continue
		}
		read[id] = true
		history, err := s.store.JobEvents(ctx, id, store.MaxJobEvents)
		if err != nil {
			return evs, fmt.Errorf("read job %s's history after a failed write: %w", id, err)
		}
		for j := range history {
			have[keyOf(&history[j])]++
		}
	}
	out := evs[:0:0]
	for i := range evs {
		if k := keyOf(&evs[i]); have[k] > 0 {
			have[k]--
			continue
		}
		out = append(out, evs[i])
	}
	return out, nil
}

// maxJobScan bounds the jobs one List call of pending or blocked jobs
// reads; a page may come back short, with a cursor to go on from.
const maxJobScan = 10_000

// matches reports whether v passes q's filters.
func matches(q *ListQuery, v *View) bool {
	return v.State == q.State && (q.Method == "" || v.Method == q.Method) &&
		(q.Name == "" || strings.Contains(v.Name, q.Name)) && matchesQ(q.Q, v)
}

// matchesQ reports whether q, in any case, is a substring of v's name or
// key (an empty q matches every job).
func matchesQ(q string, v *View) bool {
	if q == "" {
		return true
	}
	q = strings.ToLower(q)
	return strings.Contains(strings.ToLower(v.Name), q) || strings.Contains(strings.ToLower(v.Key), q)
}

// runStatesOf returns the run states whose runs may belong to jobs in
// state js: a job's newest run decides its state (task.DeriveJobState), so
// every job in js has a run in one of them. A dead job's newest run ended
// dead, rejected, timeout or skipped.
func runStatesOf(js task.JobState) ([]task.RunState, error) {
	switch js {
	case task.JobDead:
		return []task.RunState{task.RunDead, task.RunRejected, task.RunTimeout, task.RunSkipped}, nil
	case task.JobCancelled:
		return []task.RunState{task.RunCancelled}, nil
	case task.JobFailed:
		return []task.RunState{task.RunFailed}, nil
	case task.JobRunning, task.JobBackfilling:
		return []task.RunState{task.RunRunning}, nil
	case task.JobDone:
		return []task.RunState{task.RunDone}, nil
	}
	return nil, task.Invalid("state", "must be pending, blocked, running, backfilling, failed, done, dead or cancelled; got %q",
		task.Truncate(string(js), 40))
}

// List returns jobs whose newest run puts them in q.State (dead letters
// with State dead), newest first by that run's (fired_at, trigger_id), and
// the cursor of the next page (zero on the last).
func (s *Service) List(ctx context.Context, q ListQuery) ([]*View, store.RunCursor, error) {
	if q.Limit <= 0 || q.Limit > MaxBackfill {
		q.Limit = 100
	}
	if q.State == task.JobPending || q.State == task.JobBlocked {
		return s.listByJob(ctx, q)
	}
	states, err := runStatesOf(q.State)
	if err != nil {
		return nil, store.RunCursor{}, err
	}
	var out []*View
	cursor := q.Cursor
	seen := map[string]bool{}
	for len(out) < q.Limit {
		runs, err := s.jobRunsIn(ctx, states, cursor, q.Limit)
		if err != nil {
			return nil, store.RunCursor{}, err
		}
		for _, r := range runs {
			cursor = store.RunCursor{FiredAt: r.FiredAt, TriggerID: r.TriggerID}
			if seen[r.TaskID] {
				continue
			}
			seen[r.TaskID] = true
			v, err := s.listed(ctx, r.TaskID)
			if err != nil {
				return nil, store.RunCursor{}, err
			}
			if v != nil && matches(&q, v) {
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

// listed returns the view of job id with its newest run, nil when it is
// gone or not a job.
func (s *Service) listed(ctx context.Context, id string) (*View, error) {
	t, err := s.store.GetTask(ctx, id)
	if errors.Is(err, task.ErrNotFound) || err == nil && t.Job == nil {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	latest, err := s.store.ListRuns(ctx, id, time.Time{}, 1)
	if err != nil {
		return nil, err
	}
	return viewOf(t, latest), nil
}

// jobRunsIn returns up to limit job runs in any of states, newest first
// by (fired_at, trigger_id), strictly before the cursor before: one query
// per state, merged. Each query returns its newest limit runs, so the
// merged page's first limit are the newest of all; a page shorter than
// limit means every state is exhausted.
func (s *Service) jobRunsIn(ctx context.Context, states []task.RunState, before store.RunCursor, limit int) ([]*task.Run, error) {
	var all []*task.Run
	for _, st := range states {
		runs, err := s.store.QueryRuns(ctx, store.RunQuery{Target: task.JobTargetID, State: st, Before: before, Limit: limit})
		if err != nil {
			return nil, err
		}
		all = append(all, runs...)
	}
	if len(states) > 1 {
		slices.SortFunc(all, func(a, b *task.Run) int {
			return cmp.Or(b.FiredAt.Compare(a.FiredAt), strings.Compare(b.TriggerID, a.TriggerID))
		})
	}
	return all[:min(len(all), limit)], nil
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
