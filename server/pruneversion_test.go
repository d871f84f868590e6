package server

import (
	"net/http"
	"strings"
	"testing"

	"cronsheet/declared"
)

// TestPruneKeepsARowEditedSincePlan: cronsheet apply --prune deletes a
// row at the version its plan read (If-Match): a row edited by hand
// between the plan and the apply is not deleted, and the apply stops
// naming it with the conflict.
func TestPruneKeepsARowEditedSincePlan(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c := &declared.Client{Base: b.base}
	both := "name: team\nrows:\n  memos:\n    keep: {content: k, when: daily 08:00, channel: outbox}\n    drop: {content: d, when: daily 09:00, channel: outbox}\n"
	f, err := declared.Parse("both.yaml", []byte(both))
	if err != nil {
		t.Fatal(err)
	}
	p, err := declared.Compute(t.Context(), c, f, false)
	if err == nil {
		err = p.Apply(t.Context(), c, nil)
	}
	if err != nil {
		t.Fatalf("apply both rows: %v", err)
	}

	one, err := declared.Parse("one.yaml", []byte(strings.Replace(both, "    drop: {content: d, when: daily 09:00, channel: outbox}\n", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	p, err = declared.Compute(t.Context(), c, one, true)
	if err != nil || p.Count(declared.Delete) != 1 {
		t.Fatalf("prune plan: %v, %d deletes; want 1", err, p.Count(declared.Delete))
	}
	// Edited by hand between the plan and the apply.
	if code := b.call(t, "PATCH", "/api/v1/scenarios/memos/rows/drop", map[string]any{"content": "edited by hand"}, nil); code != http.StatusOK {
		t.Fatalf("PATCH drop: %d", code)
	}
	err = p.Apply(t.Context(), c, nil)
	if err == nil || !strings.Contains(err.Error(), "409") || !strings.Contains(err.Error(), "drop") {
		t.Errorf("apply of the prune after an edit: %v, want a 409 naming row drop", err)
	}
	if code := b.call(t, "GET", "/api/v1/scenarios/memos/rows/drop", nil, nil); code != http.StatusOK {
		t.Errorf("row drop, edited since the plan, was deleted: GET %d", code)
	}
	// Planned again, the delete goes through.
	p, err = declared.Compute(t.Context(), c, one, true)
	if err == nil {
		err = p.Apply(t.Context(), c, nil)
	}
	if err != nil {
		t.Fatalf("apply the prune again: %v", err)
	}
	if code := b.call(t, "GET", "/api/v1/scenarios/memos/rows/drop", nil, nil); code != http.StatusNotFound {
		t.Errorf("row drop after a fresh prune: GET %d, want 404", code)
	}
}
