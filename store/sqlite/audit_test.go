package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

func TestAudit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })

	// Before anything was audited, listing finds nothing.
	recs, err := s.ListAudit(ctx, "memos", "m1", 0, 10)
	if err != nil || len(recs) != 0 {
		t.Fatalf("empty ListAudit = %v, %v", recs, err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 678_900_000, time.UTC)
	for i, a := range []string{store.AuditCreate, store.AuditUpdate, store.AuditDelete} {
		rec := &store.AuditRecord{Scenario: "memos", RowID: "m1", Action: a, Who: strings.Repeat("w", 200),
			At:  at.Add(time.Duration(i) * time.Second),
			Old: map[string]any{"n": json.Number("1")}, New: map[string]any{"title": "x", "n": 2}}
		if a == store.AuditCreate {
			rec.Old = nil
		}
		if err := s.AddAudit(ctx, rec); err != nil {
			t.Fatal(err)
		}
		if rec.ID == 0 {
			t.Error("AddAudit left ID 0")
		}
	}
	if err := s.AddAudit(ctx, &store.AuditRecord{Scenario: "memos", RowID: "m2", Action: store.AuditCreate}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddAudit(ctx, &store.AuditRecord{Scenario: "memos"}); !errors.Is(err, task.ErrInvalid) {
		t.Errorf("AddAudit without row = %v, want ErrInvalid", err)
	}

	recs, err = s.ListAudit(ctx, "memos", "m1", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Action != store.AuditDelete || recs[2].Action != store.AuditCreate {
		t.Fatalf("records = %+v, want delete, update, create", recs)
	}
	r := recs[1]
	if len(r.Who) != store.MaxAuditWho || !r.At.Equal(at.Add(time.Second).Truncate(time.Millisecond)) ||
		r.Old["n"] != json.Number("1") || r.New["n"] != json.Number("2") || r.New["title"] != "x" {
		t.Errorf("update record = %+v", r)
	}
	if recs[2].Old != nil {
		t.Errorf("create record old = %v, want nil", recs[2].Old)
	}
	// Paging by id.
	older, err := s.ListAudit(ctx, "memos", "m1", recs[0].ID, 1)
	if err != nil || len(older) != 1 || older[0].ID != recs[1].ID {
		t.Errorf("page before %d = %+v, %v", recs[0].ID, older, err)
	}
	if _, err := s.ListAudit(ctx, "memos", "m1", 0, 0); !errors.Is(err, task.ErrInvalid) {
		t.Errorf("limit 0 = %v, want ErrInvalid", err)
	}
	// The table survives reopening (creation is idempotent).
	_ = s.Close()
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s2.Close() })
	if err := s2.AddAudit(ctx, &store.AuditRecord{Scenario: "memos", RowID: "m1", Action: store.AuditUpdate}); err != nil {
		t.Fatal(err)
	}
	if recs, err := s2.ListAudit(ctx, "memos", "m1", 0, 10); err != nil || len(recs) != 4 {
		t.Errorf("after reopen: %d records, %v", len(recs), err)
	}
}
