package auditapi

import (
	"maps"
	"reflect"
	"slices"

	"cronsheet/store"
)

// fieldChange is one field an audit record changed, old and new in the
// field's own values. A field the record did not hold before (a field
// added) has no old value and Added set; one it no longer holds (a field
// removed) has no new value and Removed set, so that a page never has to
// show an absent value as something ("undefined", null).
type fieldChange struct {
	Field   string `json:"field"`
	Old     any    `json:"old,omitempty"`
	New     any    `json:"new,omitempty"`
	Added   bool   `json:"added,omitempty"`
	Removed bool   `json:"removed,omitempty"`
}

// changesOf lists what r changed, field by field in name order: for a
// record with old and new values, the fields that differ (added, removed
// or changed); for a record with new values only (a create), each field
// added; with old values only (a delete), each field removed. A field
// held as null counts as not held.
func changesOf(r *store.AuditRecord) []fieldChange {
	keys := map[string]bool{}
	for _, m := range []map[string]any{r.Old, r.New} {
		for k := range maps.Keys(m) {
			keys[k] = true
		}
	}
	var out []fieldChange
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		o, n := r.Old[k], r.New[k]
		switch {
		case o == nil && n == nil:
		case o == nil:
			out = append(out, fieldChange{Field: k, New: n, Added: true})
		case n == nil:
			out = append(out, fieldChange{Field: k, Old: o, Removed: true})
		case !reflect.DeepEqual(o, n):
			out = append(out, fieldChange{Field: k, Old: o, New: n})
		}
	}
	return out
}
