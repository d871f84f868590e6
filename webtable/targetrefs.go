package webtable

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"cronsheet/api/httpapi"

	"cronsheet/mapping"
	"cronsheet/task"
)

// targetCheck tells whether the targets and flows a row names exist,
// remembering the answers of one request (an import names the same
// targets on many lines). It holds each target it finds
// (store.TargetUsers.HoldTargets) before looking it up, and the request
// releases the holds once its rows are stored (release): a delete of the
// target meanwhile then sees the hold or the stored row and is refused,
// or it came first and the lookup finds the target gone. Without the
// hold, a row created while its target was deleted was stored naming a
// deleted target.
type targetCheck struct {
	st     Store
	now    func() time.Time
	holder string
	held   bool
	exists map[string]bool
	flows  map[string]bool
}

// newTargetCheck returns a check over a's store.
func (a *API) newTargetCheck() *targetCheck {
	return &targetCheck{st: a.store, now: a.Now, holder: "row/" + rand.Text(),
		exists: map[string]bool{}, flows: map[string]bool{}}
}

// release removes the check's holds; it runs after the rows are stored,
// whether or not the request is still there.
func (tc *targetCheck) release(ctx context.Context) {
	if tc.held {
		_ = tc.st.ReleaseTargets(context.WithoutCancel(ctx), tc.holder)
	}
}

// check refuses, with a *task.ValidationError naming the row field, a
// target id that fields name and no stored target has. Ids that before
// (the stored fields, nil for a new row) named already are not looked up,
// so an edit of another field is not refused for a target deleted
// meanwhile. A "flow:<id>" entry names a flow, not a stored target.
func (tc *targetCheck) check(ctx context.Context, sc *mapping.Scenario, fields, before map[string]any) error {
	had := map[mapping.TargetRef]bool{}
	if before != nil {
		for _, r := range sc.TargetRefs(before) {
			had[r] = true
		}
	}
	for _, r := range sc.TargetRefs(fields) {
		if had[r] {
			continue
		}
		if flow, isFlow := task.FlowOfTarget(r.ID); isFlow {
			ok, err := tc.flowExists(ctx, flow)
			if err != nil {
				return err
			}
			if !ok {
				return task.Invalid(r.Field, "flow %q does not exist; create it first (POST /api/v1/flows) or name another", flow)
			}
			continue
		}
		ok, err := tc.exist(ctx, r.ID)
		if err != nil {
			return err
		}
		if !ok {
			return task.Invalid(r.Field, "target %q does not exist; create it first (POST /api/v1/targets) or name another", r.ID)
		}
	}
	return nil
}

// exist reports whether target id is stored.
func (tc *targetCheck) exist(ctx context.Context, id string) (bool, error) {
	if ok, seen := tc.exists[id]; seen {
		return ok, nil
	}
	tc.held = true
	if err := tc.st.HoldTargets(ctx, tc.holder, []string{id}, tc.now()); err != nil {
		return false, httpapi.DescribeAs(err, task.ErrConflict, task.CodeConflict,
			"target %q is being deleted; name another target or try again", id)
	}
	_, err := tc.st.GetTarget(ctx, id)
	switch {
	case errors.Is(err, task.ErrNotFound):
		tc.exists[id] = false
	case err != nil:
		return false, fmt.Errorf("read target %s: %w", id, err)
	default:
		tc.exists[id] = true
	}
	return tc.exists[id], nil
}

// importTargetErrors checks the targets every line of an import names: the
// refusal listing each line naming a target that does not exist, nil when
// there is none.
func (a *API) importTargetErrors(ctx context.Context, sc *mapping.Scenario, rows []importRow, tc *targetCheck) (*importRefused, error) {
	var lines []lineError
	failed := 0
	for _, r := range rows {
		err := tc.check(ctx, sc, r.row.Fields, nil)
		var ve *task.ValidationError
		switch {
		case errors.As(err, &ve):
			failed++
			if len(lines) < maxImportErrors {
				lines = append(lines, toLineError(r.line, err))
			}
		case err != nil:
			return nil, err
		}
	}
	if len(lines) == 0 {
		return nil, nil
	}
	return &importRefused{Code: task.CodeInvalidField, Lines: lines,
		Error: fmt.Sprintf("%d of %d lines name targets that do not exist; nothing was imported (the first: %s)",
			failed, len(rows), task.LineError(lines[0].Line, lines[0].Field, lines[0].Error))}, nil
}

// flowExists reports whether flow id is stored.
func (tc *targetCheck) flowExists(ctx context.Context, id string) (bool, error) {
	if ok, seen := tc.flows[id]; seen {
		return ok, nil
	}
	_, err := tc.st.GetFlow(ctx, id)
	switch {
	case errors.Is(err, task.ErrNotFound):
		tc.flows[id] = false
	case err != nil:
		return false, fmt.Errorf("read flow %s: %w", id, err)
	default:
		tc.flows[id] = true
	}
	return tc.flows[id], nil
}
