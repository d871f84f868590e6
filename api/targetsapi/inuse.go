package targetsapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"cronsheet/api/httpapi"
	"cronsheet/store"
	"cronsheet/task"
)

// inUseShown is how many users of a target a refused delete names.
const inUseShown = 5

// flowsPage is the page size of the flow scan of inUse.
const flowsPage = 200

// inUse refuses (409) the delete of a target that something names: the
// writers holding it (a row or flow being saved naming it), the rows whose
// tasks' targets or alert targets list it (a deleted row's task does not
// count), the rows saved naming it and not synced yet (Deps.PendingRows)
// and the flows with a step listing it. The answer names up to inUseShown
// of each and the counts. deleteUnused calls it after storing the
// target's tombstone, so that no writer names the target unseen.
func (a *API) inUse(ctx context.Context, id string) error {
	holds, err := a.store.TargetHolds(ctx, id, a.Now().Add(-store.GuardTTL))
	if err != nil {
		return err
	}
	if holds > 0 {
		return httpapi.CodedErr(http.StatusConflict, task.CodeConflict, "", "target %q is being named by %d "+
			"edit(s) under way; try again", id, holds)
	}
	var pending []string
	if a.pendingRows != nil {
		if pending, err = a.pendingRows(ctx, id); err != nil {
			return err
		}
	}
	tasks, nTasks, err := a.store.TasksUsingTarget(ctx, id, inUseShown)
	if err != nil {
		return err
	}
	flows, err := a.flowsUsing(ctx, id)
	if err != nil {
		return err
	}
	// A row both pending and synced (an edit of a row whose task names
	// the target) counts once.
	for _, r := range pending {
		if !slices.Contains(tasks, r) {
			nTasks++
			if len(tasks) < inUseShown {
				tasks = append(tasks, r)
			}
		}
	}
	if nTasks == 0 && len(flows) == 0 {
		return nil
	}
	var parts []string
	if nTasks > 0 {
		parts = append(parts, fmt.Sprintf("%d row(s) (%s)", nTasks, listSome(tasks, nTasks)))
	}
	if len(flows) > 0 {
		parts = append(parts, fmt.Sprintf("%d flow(s) (%s)", len(flows), listSome(flows[:min(len(flows), inUseShown)], len(flows))))
	}
	return httpapi.CodedErr(http.StatusConflict, task.CodeConflict, "", "target %q is in use by %s: "+
		"remove it from their targets first", id, strings.Join(parts, " and "))
}

// listSome quotes shown, adding "…" when total is more.
func listSome(shown []string, total int) string {
	q := make([]string, len(shown))
	for i, s := range shown {
		q[i] = fmt.Sprintf("%q", s)
	}
	out := strings.Join(q, ", ")
	if total > len(shown) {
		out += ", …"
	}
	return out
}

// flowsUsing returns the ids of the flows with a step naming target id.
func (a *API) flowsUsing(ctx context.Context, id string) ([]string, error) {
	var out []string
	after := ""
	for {
		page, err := a.store.ListFlows(ctx, after, flowsPage)
		if err != nil {
			return nil, err
		}
		for _, f := range page {
			for _, s := range f.Steps {
				if slices.Contains(s.Targets, id) {
					out = append(out, f.ID)
					break
				}
			}
		}
		if len(page) < flowsPage {
			return out, nil
		}
		after = page[len(page)-1].ID
	}
}
