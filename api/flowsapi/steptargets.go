package flowsapi

import (
	"context"
	"errors"
	"fmt"

	"cronsheet/task"
)

// checkStepTargets refuses a flow whose steps name a target that is not
// stored, naming the step's field (steps[i].targets[j]), and a step that
// sends through an email or SMS target without a recipient
// (steps[i].params.to, task.CheckStepRecipient): such a step would
// otherwise fail only when the flow runs.
func (f *API) checkStepTargets(ctx context.Context, fl *task.Flow) error {
	known := map[string]*task.Target{}
	for i, s := range fl.Steps {
		for j, id := range s.Targets {
			tg, ok := known[id]
			if !ok {
				var err error
				tg, err = f.store.GetTarget(ctx, id)
				switch {
				case errors.Is(err, task.ErrNotFound):
					return task.Invalid(fmt.Sprintf("steps[%d].targets[%d]", i, j),
						"target %q does not exist; create it first (POST /api/v1/targets) or name another", id)
				case err != nil:
					return fmt.Errorf("read target %s: %w", id, err)
				}
				known[id] = tg
			}
			if err := task.CheckStepRecipient(i, s, tg); err != nil {
				return err
			}
		}
	}
	return nil
}
