package webtable

import (
	"context"

	"cronsheet/mapping"
	"cronsheet/task"
)

// RowSyncer turns one row, as just written, into its task's state at once:
// the sync patrol's work for that row (patrol.Sync.SyncRow), which the
// server wires in.
type RowSyncer interface {
	SyncRow(ctx context.Context, row *task.Row) error
}

// switchOff makes the switch-off of row (its active field saved as 0) hold
// before the request is answered: the row's task is disabled in the store
// by the sync patrol's own path, so a fire that reads the task after the
// answer finds it disabled and sends nothing (a fire that read it before
// may still deliver). A row left active is the patrol's to sync. When the
// task's write fails, the row's change stays and the answer still
// succeeds: the row is still unfetched, so the sync patrol (woken by the
// edit) finishes the switch-off.
//
// It then sets row to what holds, for the answer: the row as the sync
// stored it (is_active 0, is_fetched 1) when it is still at the version
// saved; else is_active 0 with is_fetched 0, which says the task's side
// is pending. Before, the answer showed the is_active of before the edit
// (1) until the next sync.
func (a *API) switchOff(ctx context.Context, sc *mapping.Scenario, row *task.Row) {
	if a.sync == nil || isActive(sc, row.Fields) != task.RowInactive {
		return
	}
	err := a.sync.SyncRow(ctx, row)
	if err != nil {
		a.Logger().WarnContext(ctx, "row switched off; its task is disabled by the sync patrol's next pass",
			"scenario", sc.Name(), "row", row.ID, "error", err)
	} else if now, err := a.store.GetRow(ctx, row.Scenario, row.ID); err == nil && now.Version == row.Version &&
		now.IsFetched == 1 {
		*row = *now
		return
	}
	row.IsActive = task.RowInactive
}
