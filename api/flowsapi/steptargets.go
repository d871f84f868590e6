package flowsapi

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"

	"cronsheet/api/httpapi"
	"cronsheet/task"
)

// checkStepTargets refuses a flow whose steps name a target that is not
// stored, naming the step's field (steps[i].targets[j]), and a step that
// sends through an email or SMS target without a recipient
// (steps[i].params.to, task.CheckStepRecipient): such a step would
// otherwise fail only when the flow runs.
//
// It first holds the targets the steps name (store.TargetUsers), and the
// caller calls release once the flow is stored, so that a delete of one
// of them meanwhile sees the hold or the stored flow, or came first and
// the check finds the target gone.
func (f *API) checkStepTargets(ctx context.Context, fl *task.Flow) (release func(), err error) {
	holder := "flow/" + rand.Text()
	release = func() { _ = f.store.ReleaseTargets(context.WithoutCancel(ctx), holder) }
	var ids []string
	for _, s := range fl.Steps {
		for _, id := range s.Targets {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return func() {}, nil
	}
	if err := f.store.HoldTargets(ctx, holder, ids, f.Now()); err != nil {
		return release, httpapi.DescribeAs(err, task.ErrConflict, task.CodeConflict,
			"a target the flow names is being deleted; name another target or try again")
	}
	return release, f.checkKnownTargets(ctx, fl)
}

// checkKnownTargets is checkStepTargets' check, the targets held.
func (f *API) checkKnownTargets(ctx context.Context, fl *task.Flow) error {
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
