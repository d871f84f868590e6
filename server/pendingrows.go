package server

import (
	"context"
	"fmt"
	"slices"
	"time"

	"cronsheet/mapping"
	"cronsheet/task"
)

// pendingScan bounds the unsynced rows a target delete reads: the sync
// patrol keeps them few (it syncs them within a tick); past this many the
// delete is refused rather than judged on a part of them.
const pendingScan = 10000

// pendingRowsUsing returns the ids of the tasks of the rows saved naming
// target id (in their targets or alert targets) and not synced yet, for
// targetsapi.Deps.PendingRows: a row just created is not among
// TasksUsingTarget until the sync patrol maps it. A row that does not map
// (invalid: it never fires) does not count.
func (s *Server) pendingRowsUsing(scenarios map[string]*mapping.Scenario) func(ctx context.Context, id string) ([]string, error) {
	return func(ctx context.Context, id string) ([]string, error) {
		rows, err := s.store.ListUnfetchedRows(ctx, pendingScan+1)
		if err != nil {
			return nil, fmt.Errorf("rows not synced yet: %w", err)
		}
		if len(rows) > pendingScan {
			return nil, fmt.Errorf("%w: more than %d rows wait for the sync; try again", task.ErrConflict, pendingScan)
		}
		var out []string
		now := time.Now()
		for _, r := range rows {
			sc := scenarios[r.Scenario]
			if sc == nil || !slices.ContainsFunc(sc.TargetRefs(r.Fields), func(ref mapping.TargetRef) bool { return ref.ID == id }) {
				continue
			}
			t, err := sc.ToTask(r, now)
			if err != nil {
				continue
			}
			out = append(out, t.TaskID)
		}
		return out, nil
	}
}
