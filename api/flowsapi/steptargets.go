package flowsapi

import (
	"context"
	"errors"
	"fmt"

	"cronsheet/task"
)

// checkStepTargets refuses a flow whose steps name a target that is not
// stored, naming the step's field (steps[i].targets[j]): a step would
// otherwise fail only when the flow runs.
func (f *API) checkStepTargets(ctx context.Context, fl *task.Flow) error {
	known := map[string]bool{}
	for i, s := range fl.Steps {
		for j, id := range s.Targets {
			if known[id] {
				continue
			}
			_, err := f.store.GetTarget(ctx, id)
			switch {
			case errors.Is(err, task.ErrNotFound):
				return task.Invalid(fmt.Sprintf("steps[%d].targets[%d]", i, j),
					"target %q does not exist; create it first (POST /api/v1/targets) or name another", id)
			case err != nil:
				return fmt.Errorf("read target %s: %w", id, err)
			}
			known[id] = true
		}
	}
	return nil
}
