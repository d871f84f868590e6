package targetsapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"cronsheet/api/httpapi"
	"cronsheet/task"
)

// inUseShown is how many users of a target a refused delete names.
const inUseShown = 5

// flowsPage is the page size of the flow scan of inUse.
const flowsPage = 200

// inUse refuses (409) the delete of a target that rows or flows name: the
// rows whose tasks' targets or alert targets list it (a deleted row's task
// does not count) and the flows with a step listing it. The answer names up to inUseShown of each and the
// counts. A task or flow saved naming the target while it is deleted
// still fails at fire time, recorded "target not found".
func (a *API) inUse(ctx context.Context, id string) error {
	tasks, nTasks, err := a.store.TasksUsingTarget(ctx, id, inUseShown)
	if err != nil {
		return err
	}
	flows, err := a.flowsUsing(ctx, id)
	if err != nil {
		return err
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
