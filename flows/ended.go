package flows

import (
	"context"

	"cronsheet/task"
)

// refreshEnded reads again the runs of x's ended step runs that were last
// seen unfinished, so that a step run's record follows its runs to their
// end when its outcome came first (result any, a failure under all, its
// timeout, a stop). It reports whether x changed.
func (e *Engine) refreshEnded(ctx context.Context, x *task.Execution) (bool, error) {
	changed := false
	for _, sr := range x.StepRuns {
		if sr.Open() || !anyUnfinished(sr.Runs) {
			continue
		}
		runs, err := e.ledgerRuns(ctx, x, sr)
		if err != nil {
			return false, err
		}
		if seen := targetRuns(runs); !sameRuns(sr.Runs, seen) {
			sr.Runs, changed = seen, true
		}
	}
	return changed, nil
}

// anyUnfinished reports whether one of runs is not final.
func anyUnfinished(runs []task.StepTargetRun) bool {
	for _, r := range runs {
		if !r.State.Final() {
			return true
		}
	}
	return false
}

// targetRuns is a step run's record of its ledger runs.
func targetRuns(runs []*task.Run) []task.StepTargetRun {
	seen := make([]task.StepTargetRun, 0, len(runs))
	for _, r := range runs {
		seen = append(seen, task.StepTargetRun{Target: r.Target, TriggerID: r.TriggerID, State: r.State,
			Output: r.Output, Error: r.Error})
	}
	return seen
}
