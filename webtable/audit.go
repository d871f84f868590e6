package webtable

import (
	"context"
	"maps"
	"reflect"

	"cronsheet/store"
)

// record writes one row's audit record. The edit is already saved, so a
// failure is logged rather than answered. Package auditapi reads the
// records back.
//
// An update that changed no field is not recorded: every record says what
// changed.
func (a *API) record(ctx context.Context, user, scenario, rowID, action string, old, neu map[string]any) {
	if action == store.AuditUpdate && reflect.DeepEqual(old, neu) {
		return
	}
	rec := &store.AuditRecord{Scenario: scenario, RowID: rowID, Action: action, Who: user,
		At: a.Now(), Old: maps.Clone(old), New: maps.Clone(neu)}
	if err := a.store.AddAudit(context.WithoutCancel(ctx), rec); err != nil {
		a.Logger().ErrorContext(ctx, "audit record lost", "scenario", scenario, "row", rowID,
			"action", action, "who", user, "error", err)
	}
}
