package fire

import (
	"context"

	"cronsheet/task"
)

// A target may send its final report while its HTTP call is still in
// flight (it reports, then answers). The report ends the run (Feedback)
// and bumps its fence, so the call's outcome write that follows is
// refused. The call's answer is kept all the same: while a call of a run
// is made here (answering), a final report's observers are not told at
// once but handed to the delivery (heldReport); when the delivery's
// outcome is written or refused (endAnswer), it writes the call's answer
// into the run as its output when the report gave none (keepAnswer) and
// then tells the observers, with the output. A job's wait thus answers
// with the call's result beside the report's final state. The report's
// state, error and feedback are never written over.

// heldReport is a final report's observation held for the delivery of its
// run that is making its call here.
type heldReport struct {
	t    *task.Task
	held bool      // a report came and is held
	run  *task.Run // the run as the report stored it
}

// beginAnswer marks run's call as in flight here, until endAnswer.
// (A retry's call begins after the attempt before it ended.)
func (f *Firer) beginAnswer(run *task.Run) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answering[run.TriggerID] = &heldReport{}
}

// holdReport hands the observation of a final report that ended the run
// out (with its task t) to the delivery making that run's call here; it
// reports false when no call of the run is in flight here (the caller
// tells the observers itself).
func (f *Firer) holdReport(t *task.Task, out *task.Run) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.answering[out.TriggerID]
	if h == nil {
		return false
	}
	h.t, h.run, h.held = t, out, true
	return true
}

// Answering reports whether a call of the run triggerID is in flight
// here: a final report that ended it waits for the call's answer to be
// kept before its observers are told.
func (f *Firer) Answering(triggerID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.answering[triggerID]
	return h != nil && h.held
}

// endAnswer ends the call of run triggerID here: a final report held for
// it meanwhile gets the call's answer ("" when the call never returned)
// kept in the run (keepAnswer), then its observers are told.
func (f *Firer) endAnswer(ctx context.Context, tg *task.Target, triggerID, answer string) {
	f.mu.Lock()
	h := f.answering[triggerID]
	held := h != nil && h.held // a report is held once at most: a run takes one final report
	if !held {
		delete(f.answering, triggerID)
	}
	f.mu.Unlock()
	if !held {
		return
	}
	out := h.run
	if kept := f.keepAnswer(ctx, h.run, answer); kept != nil {
		out = kept
	}
	// Answering stays true until the answer is kept, so a wait that reads
	// the run meanwhile goes on; the observers are told after.
	f.mu.Lock()
	delete(f.answering, triggerID)
	f.mu.Unlock()
	f.observe(h.t, tg, out)
}

// keepAnswer writes answer as the output of stored, a run ended by its
// final report, when the report gave none; it returns the run as written
// (nil when nothing was). The write is the stored run itself with that
// output, fenced at the fence the report set: a run ended is changed by
// nothing else, and one changed meanwhile is left as it is.
func (f *Firer) keepAnswer(ctx context.Context, stored *task.Run, answer string) *task.Run {
	if answer == "" || stored.Output != "" || !stored.State.Final() {
		return nil
	}
	w := *stored
	w.Output = task.Truncate(answer, task.MaxOutput)
	w.Feedback = nil // the stored reports stay as they are
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.cfg.StoreTimeout)
	err := f.store.UpdateRun(sctx, &w)
	cancel()
	if err != nil {
		f.logger.WarnContext(ctx, "the call's answer not kept beside its run's final report", "trigger_id", w.TriggerID,
			"error", err)
		return nil
	}
	w.Feedback = stored.Feedback
	return &w
}
