package webtable

import (
	"time"

	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// hideIdleNextFire clears row's next fire when the row does not fire: it
// is switched off or in error (its is_active), its active field as last
// saved says off (the sync patrol has not seen the edit yet), or its task
// is disabled or done. The stored next fire is the task's feedback, which
// lags behind a switch-off until a node disarms the task, so every answer
// that shows a row (the rows API, the table, its CSV export) passes
// through here. sc or tk may be nil (not known).
func hideIdleNextFire(sc *mapping.Scenario, row *task.Row, tk *store.RowTask) {
	if row == nil || row.NextFire.IsZero() {
		return
	}
	idle := row.IsActive != task.RowActive ||
		(sc != nil && isActive(sc, row.Fields) != task.RowActive) ||
		(tk != nil && (!tk.Enabled || tk.Done))
	if idle {
		row.NextFire = time.Time{}
	}
}
