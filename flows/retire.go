package flows

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"cronsheet/task"
)

// Retire winds up flow f once it is deleted: its running executions are
// stopped (as by Stop), and its step tasks are retired (store
// RetireTasks: disarmed by the node holding them, then removed), those of
// f's version and of every version its executions (at most resumeBatch,
// the newest) ran. A flow created again under f's id makes its step
// tasks afresh. It is idempotent; errors are joined.
func (e *Engine) Retire(ctx context.Context, f *task.Flow) error {
	var errs []error
	execs, err := e.st.ListExecutions(ctx, f.ID, resumeBatch)
	if err != nil {
		errs = append(errs, fmt.Errorf("retire flow %s: %w", f.ID, err))
	}
	steps := stepTaskIDs(f)
	for _, x := range execs {
		if x.Flow != nil {
			for id := range stepTaskIDs(x.Flow) {
				steps[id] = true
			}
		}
		if x.State.Final() {
			continue
		}
		if _, err := e.Stop(ctx, x.ID); err != nil && !errors.Is(err, task.ErrConflict) {
			errs = append(errs, err)
		}
	}
	if _, err := e.st.RetireTasks(ctx, slices.Collect(maps.Keys(steps))); err != nil {
		errs = append(errs, fmt.Errorf("retire the step tasks of flow %s: %w", f.ID, err))
	}
	e.cfg.Wake()
	return errors.Join(errs...)
}

// stepTaskIDs returns the ids of the step tasks of f's steps.
func stepTaskIDs(f *task.Flow) map[string]bool {
	ids := make(map[string]bool, len(f.Steps))
	for _, s := range f.Steps {
		ids[StepTaskID(f, s.ID)] = true
	}
	return ids
}
