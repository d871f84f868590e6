package flows

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"cronsheet/task"
)

// Advance brings execution id up to date with the ledger and returns it as
// stored: open step runs not fired yet are fired (again: a no-op when they
// were), their runs are read from the ledger, a complete result or a
// passed deadline gives the outcome, the outcome's edges plan the next
// step runs, and an execution without open step runs ends. It is
// idempotent, and safe on several nodes at once: every change is a
// compare-and-set of the execution, retried from a fresh read.
func (e *Engine) Advance(ctx context.Context, id string) (*task.Execution, error) {
	defer e.lock(id)()
	for range maxTries {
		x, err := e.st.GetExecution(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("advance execution %s: %w", id, err)
		}
		if x.State.Final() {
			// Its step runs' records still follow their runs to their end.
			switch changed, err := e.refreshEnded(ctx, x); {
			case err != nil:
				return nil, fmt.Errorf("advance execution %s: %w", id, err)
			case !changed:
				return x, nil
			}
			switch err := e.st.UpdateExecution(ctx, x); {
			case errors.Is(err, task.ErrConflict):
				continue
			case err != nil:
				return nil, fmt.Errorf("advance execution %s: %w", id, err)
			}
			return x, nil
		}
		open := openRuns(x)
		changed, err := e.step(ctx, x)
		if err != nil {
			return nil, fmt.Errorf("advance execution %s: %w", id, err)
		}
		if !changed {
			return x, nil
		}
		switch err := e.st.UpdateExecution(ctx, x); {
		case errors.Is(err, task.ErrConflict):
			continue // another node (or Stop) changed it: read again
		case err != nil:
			return nil, fmt.Errorf("advance execution %s: %w", id, err)
		}
		e.report(ctx, x, open)
		if x.State.Final() {
			e.logger.InfoContext(ctx, "flow execution finished", "execution_id", id, "state", x.State, "reason", x.Reason)
			return x, nil
		}
		// New step runs may have been planned: go round to fire them.
	}
	return nil, fmt.Errorf("advance execution %s: %w: too many concurrent changes", id, task.ErrConflict)
}

// step advances x in memory and reports whether it changed.
func (e *Engine) step(ctx context.Context, x *task.Execution) (bool, error) {
	changed, err := e.refreshEnded(ctx, x)
	if err != nil {
		return false, err
	}
	now := e.cfg.Now()
	// Step runs planned in this pass are fired in the next one, after the
	// plan is stored: a crash in between leaves them planned, not lost.
	open := make([]*task.StepRun, 0, 2)
	for _, sr := range x.StepRuns {
		if sr.Open() {
			open = append(open, sr)
		}
	}
	for _, sr := range open {
		c, err := e.stepRun(ctx, x, sr, now)
		if err != nil {
			return false, err
		}
		changed = changed || c
		if x.State.Final() {
			return true, nil
		}
	}
	if !hasOpen(x) {
		last := lastEnded(x)
		e.finish(x, task.ExecStateOf(last.Outcome), "", now)
		x.Result = last.Output
		return true, nil
	}
	return changed, nil
}

func hasOpen(x *task.Execution) bool {
	for _, sr := range x.StepRuns {
		if sr.Open() {
			return true
		}
	}
	return false
}

// lastEnded returns the step run that ended the execution: the latest
// finished one whose outcome had no edge (the latest finished one when
// every outcome had edges, i.e. the plan was cut).
func lastEnded(x *task.Execution) *task.StepRun {
	var best *task.StepRun
	for _, sr := range x.StepRuns {
		if len(x.Flow.Step(sr.Step).On[sr.Outcome]) == 0 &&
			(best == nil || !sr.FinishedAt.Before(best.FinishedAt)) {
			best = sr
		}
	}
	if best == nil {
		best = x.StepRuns[len(x.StepRuns)-1]
	}
	return best
}

// stepRun fires sr when needed, reads its runs and decides its outcome.
func (e *Engine) stepRun(ctx context.Context, x *task.Execution, sr *task.StepRun, now time.Time) (bool, error) {
	changed := false
	if !sr.Triggered {
		if err := e.fire(ctx, x, sr); err != nil {
			return false, err
		}
		sr.Triggered, changed = true, true
	}
	runs, err := e.ledgerRuns(ctx, x, sr)
	if err != nil {
		return false, err
	}
	if foreign(runs, x.ID) {
		// Another execution fired this step task at the same instant
		// first: plan this step run at a later instant.
		sr.Slot, sr.Triggered = x.NextSlot(now), false
		return true, nil
	}
	seen := targetRuns(runs)
	if !sameRuns(sr.Runs, seen) {
		sr.Runs, changed = seen, true
	}
	step := x.Flow.Step(sr.Step)
	outcome := task.StepOutcome(step.ResultMode(), step.Targets, seen)
	if outcome == "" && !now.Before(sr.Deadline) {
		outcome = task.OutcomeTimeout
	}
	if outcome == "" {
		return changed, nil
	}
	sr.Outcome, sr.FinishedAt, sr.Output = outcome, now, outputOf(seen, outcome)
	for _, next := range step.On[outcome] {
		if len(x.StepRuns) >= x.Flow.Depth() {
			e.finish(x, task.ExecInterrupted, fmt.Sprintf("max_depth %d reached: step %s was not run", x.Flow.Depth(), next), now)
			return true, nil
		}
		e.plan(x, x.Flow.Step(next), sr.Index, outcome, sr.Output, now)
	}
	return true, nil
}

// fire fires sr's step task at sr's slot, creating the task first when
// needed. An instant already fired is fine: the ledger says by whom.
func (e *Engine) fire(ctx context.Context, x *task.Execution, sr *task.StepRun) error {
	taskID := StepTaskID(x.Flow, sr.Step)
	params := make(map[string]string, len(sr.Params)+2)
	for k, v := range sr.Params {
		params[k] = v
	}
	params[ParamExecution], params[ParamStepRun] = x.ID, strconv.Itoa(sr.Index)
	params[task.ParamSubject] = stepSubject(x.Flow, sr.Step, params[task.ParamTitle])
	_, err := e.trigger(ctx, taskID, sr.Slot, params)
	if errors.Is(err, task.ErrNotFound) {
		if err := e.st.EnsureTask(ctx, stepTask(x.Flow, x.Flow.Step(sr.Step))); err != nil {
			return err
		}
		_, err = e.trigger(ctx, taskID, sr.Slot, params)
	}
	if err != nil && !errors.Is(err, task.ErrConflict) {
		return fmt.Errorf("fire step %s: %w", sr.Step, err)
	}
	return nil
}

// ledgerRuns returns the runs of sr's fire: its step task's runs at its
// slot.
func (e *Engine) ledgerRuns(ctx context.Context, x *task.Execution, sr *task.StepRun) ([]*task.Run, error) {
	step := x.Flow.Step(sr.Step)
	runs, err := e.st.ListRuns(ctx, StepTaskID(x.Flow, sr.Step), sr.Slot.Add(time.Millisecond), len(step.Targets)+1)
	if err != nil {
		return nil, fmt.Errorf("read runs of step %s: %w", sr.Step, err)
	}
	out := runs[:0]
	for _, r := range runs {
		if r.Slot.Equal(sr.Slot) {
			out = append(out, r)
		}
	}
	return out, nil
}

func foreign(runs []*task.Run, execID string) bool {
	for _, r := range runs {
		if r.Params[ParamExecution] != execID {
			return true
		}
	}
	return false
}

func sameRuns(a, b []task.StepTargetRun) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// outputOf is a step run's output: the first successful run's output on
// success, else the first failed run's error (or output).
func outputOf(runs []task.StepTargetRun, o task.Outcome) string {
	for _, r := range runs {
		if o == task.OutcomeSuccess && r.State == task.RunDone {
			return r.Output
		}
		if o != task.OutcomeSuccess && r.State.Final() && r.State != task.RunDone {
			return task.Truncate(cmpOr(r.Error, r.Output), task.MaxOutput)
		}
	}
	return ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// plan appends a step run of step to x, after step run prev.
func (e *Engine) plan(x *task.Execution, step *task.Step, prev int, prevStatus task.Outcome, prevOutput string, now time.Time) {
	x.StepRuns = append(x.StepRuns, &task.StepRun{
		Index: len(x.StepRuns), Step: step.ID, Prev: prev, Slot: x.NextSlot(now),
		Deadline: now.Add(step.TimeoutDuration()).Truncate(time.Millisecond),
		Params:   task.RenderStepParams(step.Params, x.Params, prevStatus, prevOutput),
	})
}

// finish ends x in state with reason: open step runs are interrupted.
func (e *Engine) finish(x *task.Execution, state task.ExecState, reason string, now time.Time) {
	x.State, x.Reason, x.FinishedAt = state, reason, now.Truncate(time.Millisecond)
	for _, sr := range x.StepRuns {
		if sr.Open() {
			sr.Outcome, sr.FinishedAt = task.OutcomeInterrupted, x.FinishedAt
		}
	}
}
