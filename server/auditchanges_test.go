package server

import (
	"net/http"
	"reflect"
	"testing"
)

// TestAuditSaysWhatChanged: every update record of a row says field by
// field what changed, old and new in the field's own values, a field
// added or removed marked so (no absent value shown as a value), and an
// edit that changes nothing leaves no record.
func TestAuditSaysWhatChanged(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const row = "/api/v1/scenarios/memos/rows/au"
	if code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{"memo_id": "au", "content": "x",
		"when": "daily 08:00", "channel": "outbox"}, nil); code != http.StatusCreated {
		t.Fatalf("create row: %d", code)
	}
	for _, patch := range []map[string]any{
		{"title": "T", "when": "daily 16:34"}, // title added, when changed
		{"title": "T"},                        // nothing changes
		{"title": nil},                        // title removed
	} {
		if code := b.call(t, "PATCH", row, patch, nil); code != http.StatusOK {
			t.Fatalf("PATCH %v: %d", patch, code)
		}
	}
	type change struct {
		Field   string `json:"field"`
		Old     any    `json:"old"`
		New     any    `json:"new"`
		Added   bool   `json:"added"`
		Removed bool   `json:"removed"`
	}
	var page struct {
		Records []struct {
			Action  string   `json:"action"`
			Changes []change `json:"changes"`
		} `json:"records"`
	}
	if code := b.call(t, "GET", "/api/v1/audit?kind=memos&id=au", nil, &page); code != http.StatusOK {
		t.Fatalf("audit: %d", code)
	}
	var updates [][]change
	for _, r := range page.Records {
		if r.Action == "update" {
			updates = append(updates, r.Changes)
		}
	}
	want := [][]change{ // newest first
		{{Field: "title", Old: "T", Removed: true}},
		{{Field: "title", New: "T", Added: true}, {Field: "when", Old: "daily 08:00", New: "daily 16:34"}},
	}
	if !reflect.DeepEqual(updates, want) {
		t.Errorf("update records' changes = %+v, want %+v (and no record of the edit that changed nothing)", updates, want)
	}
}
