package server

import (
	"context"
	"strings"
	"time"

	"cronsheet/task"
)

// kindLookupTimeout bounds the store reads runKind makes for a run whose
// target the firer did not name.
const kindLookupTimeout = 2 * time.Second

// unknownKind labels a run whose target kind cannot be told (its target
// was deleted, or the store did not answer).
const unknownKind = "unknown"

// countRun records a stored change of run r of task t in the metrics: a
// fire (attempt 1 running, or rejected) and an outcome (a final state;
// accepted is not one: the run waits for its target's feedback). tg is
// the target delivered to, when the caller knows it.
func (s *Server) countRun(ctx context.Context, t *task.Task, tg *task.Target, r task.Run) {
	switch {
	case r.State == task.RunRejected:
		kind := s.runKind(ctx, t, tg, r)
		s.metrics.Fired(kind, string(r.TriggerType))
		s.metrics.Outcome(kind, string(r.State))
	case r.State == task.RunRunning && r.Attempt == 1:
		s.metrics.Fired(s.runKind(ctx, t, tg, r), string(r.TriggerType))
	case r.State.Final():
		s.metrics.Outcome(s.runKind(ctx, t, tg, r), string(r.State))
	}
}

// runKind names the kind of target run r of t goes to, the metrics' kind
// label: tg's kind when given; a job's method kind; the channel of a task
// delivering through its own channel (email, sms, outbox); else the kind
// of the target the store holds under the run's ledger target (an alert
// run's "alert:<id>" or "absent:<id>" names its target after the colon),
// or unknownKind. Only runs the firer did not name a target for (a
// cancel, an orphan's end, a final report, a timeout) read the store.
func (s *Server) runKind(ctx context.Context, t *task.Task, tg *task.Target, r task.Run) string {
	switch {
	case tg != nil:
		return string(tg.Kind)
	case t != nil && t.Job != nil:
		return string(t.Job.Method.Kind())
	case task.Channel(r.Target).Valid():
		return r.Target
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), kindLookupTimeout)
	defer cancel()
	if r.Target == task.JobTargetID {
		jt, err := s.store.GetTask(ctx, r.TaskID)
		if err != nil || jt.Job == nil {
			return unknownKind
		}
		return string(jt.Job.Method.Kind())
	}
	id := r.Target
	if i := strings.LastIndexByte(id, ':'); i >= 0 { // target ids hold no ':'
		id = id[i+1:]
	}
	got, err := s.store.GetTarget(ctx, id)
	if err != nil {
		return unknownKind
	}
	return string(got.Kind)
}
