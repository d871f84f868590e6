package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"cronsheet/store"
	"cronsheet/store/storetest"
)

func TestAudit(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.db")
	storetest.RunAuditLog(t, func(t *testing.T) store.AuditLog {
		s, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
	// The table survives reopening (creation is idempotent).
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if recs, err := s.ListAudit(ctx, "memos", "m1", 0, 10); err != nil || len(recs) != 3 {
		t.Errorf("after reopen: %d records, %v; want the 3 written before", len(recs), err)
	}
}

func TestQueryAudit(t *testing.T) {
	t.Parallel()
	storetest.RunQueryAudit(t, func(t *testing.T) store.AuditLog {
		s, err := Open(t.Context(), filepath.Join(t.TempDir(), "audit.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
