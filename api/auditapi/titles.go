package auditapi

import (
	"context"

	"cronsheet/api/httpapi"
	"cronsheet/mapping"
	"cronsheet/store"
)

// recordView is an audit record as the API answers it: with the title of
// what it changed, so the page names a row, task, job or target rather
// than shows its id.
type recordView struct {
	*store.AuditRecord
	// Title is the changed thing's title: a row's mapped title field, a
	// task's or job's title, a target's name; "" when it has none.
	Title string `json:"title,omitempty"`
	// Changes says field by field what the record changed (changesOf).
	Changes []fieldChange `json:"changes,omitempty"`
}

// withTitles returns recs with their titles. A row's and a target's
// title come from the record's own values (the newest the record holds);
// tasks' and jobs' are read in one batch.
func (a *API) withTitles(ctx context.Context, recs []*store.AuditRecord) ([]recordView, error) {
	var ids []string
	for _, r := range recs {
		if r.Scenario == store.AuditKindTask || r.Scenario == store.AuditKindJob {
			ids = append(ids, r.RowID)
		}
	}
	tasks, err := httpapi.TaskTitles(ctx, a.store, ids)
	if err != nil {
		return nil, err
	}
	out := make([]recordView, len(recs))
	for i, r := range recs {
		out[i] = recordView{AuditRecord: r, Changes: changesOf(r)}
		switch {
		case r.Scenario == store.AuditKindTask || r.Scenario == store.AuditKindJob:
			out[i].Title = tasks[r.RowID]
		case r.Scenario == store.AuditKindTarget || r.Scenario == store.AuditKindFlow:
			out[i].Title = recordValue(r, "name")
		default:
			if sc := a.scenarios[r.Scenario]; sc != nil {
				out[i].Title = recordValue(r, sc.Field(mapping.FieldTitle))
			}
		}
	}
	return out, nil
}

// recordValue returns the string value of field in r's new values, else
// in its old ones, else "".
func recordValue(r *store.AuditRecord, field string) string {
	if field == "" {
		return ""
	}
	for _, m := range []map[string]any{r.New, r.Old} {
		if s, ok := m[field].(string); ok && s != "" {
			return s
		}
	}
	return ""
}
