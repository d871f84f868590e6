package webtable

import (
	"context"
	"errors"
	"fmt"

	"cronsheet/mapping"
	"cronsheet/task"
)

// targetCheck tells whether the targets a row names exist, remembering
// the answers of one request (an import names the same targets on many
// lines).
type targetCheck struct {
	st     Store
	exists map[string]bool
}

// newTargetCheck returns a check over a's store.
func (a *API) newTargetCheck() *targetCheck {
	return &targetCheck{st: a.store, exists: map[string]bool{}}
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
		if _, isFlow := task.FlowOfTarget(r.ID); isFlow {
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
func (a *API) importTargetErrors(ctx context.Context, sc *mapping.Scenario, rows []importRow) (*importRefused, error) {
	tc := a.newTargetCheck()
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
