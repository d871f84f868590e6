package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// RunAuditLog is the conformance test of store.AuditLog: appends, newest
// first listing per row, paging by id, the bound on who, and validation.
// newLog returns a fresh, empty log that the test may use alone.
func RunAuditLog(t *testing.T, newLog func(t *testing.T) store.AuditLog) {
	t.Helper()
	s := newLog(t)
	ctx := t.Context()

	recs, err := s.ListAudit(ctx, "memos", "m1", 0, 10)
	if err != nil || len(recs) != 0 {
		t.Fatalf("empty ListAudit = %v, %v", recs, err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 678_900_000, time.UTC)
	var ids []int64
	for i, a := range []string{store.AuditCreate, store.AuditUpdate, store.AuditDelete} {
		rec := &store.AuditRecord{Scenario: "memos", RowID: "m1", Action: a, Who: strings.Repeat("w", 200),
			At:  at.Add(time.Duration(i) * time.Second),
			Old: map[string]any{"n": "1"}, New: map[string]any{"title": "x", "n": "2"}}
		if a == store.AuditCreate {
			rec.Old = nil
		}
		if err := s.AddAudit(ctx, rec); err != nil {
			t.Fatal(err)
		}
		if len(ids) > 0 && rec.ID <= ids[len(ids)-1] {
			t.Errorf("record %d got id %d, not after %d", i, rec.ID, ids[len(ids)-1])
		}
		ids = append(ids, rec.ID)
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
		fmt.Sprint(r.Old["n"]) != "1" || fmt.Sprint(r.New["n"]) != "2" || r.New["title"] != "x" {
		t.Errorf("update record = %+v", r)
	}
	if len(recs[2].Old) != 0 {
		t.Errorf("create record old = %v, want none", recs[2].Old)
	}
	older, err := s.ListAudit(ctx, "memos", "m1", recs[0].ID, 1)
	if err != nil || len(older) != 1 || older[0].ID != recs[1].ID {
		t.Errorf("page before %d = %+v, %v", recs[0].ID, older, err)
	}
	if _, err := s.ListAudit(ctx, "memos", "m1", 0, 0); !errors.Is(err, task.ErrInvalid) {
		t.Errorf("limit 0 = %v, want ErrInvalid", err)
	}
}

// RunQueryAudit is the conformance test of store.AuditLog.QueryAudit: the
// whole trail newest first, each filter alone and together, paging, and
// records of other kinds than rows. newLog returns a fresh, empty log.
func RunQueryAudit(t *testing.T, newLog func(t *testing.T) store.AuditLog) {
	t.Helper()
	s := newLog(t)
	ctx := t.Context()
	add := func(scenario, id, action, who string) int64 {
		t.Helper()
		rec := &store.AuditRecord{Scenario: scenario, RowID: id, Action: action, Who: who,
			New: map[string]any{"state": "x"}}
		if err := s.AddAudit(ctx, rec); err != nil {
			t.Fatal(err)
		}
		return rec.ID
	}
	add("memos", "m1", store.AuditCreate, "alice")
	add(store.AuditKindTarget, "hook", store.AuditCreate, "bob (token ci)")
	add("memos", "m1", store.AuditUpdate, "bob (token ci)")
	add(store.AuditKindTask, "m1", store.AuditState, "alice")
	last := add(store.AuditKindUser, "carol", store.AuditDelete, "alice")
	actions := func(q store.AuditQuery) string {
		t.Helper()
		recs, err := s.QueryAudit(ctx, q)
		if err != nil {
			t.Fatalf("QueryAudit(%+v): %v", q, err)
		}
		var out []string
		for _, r := range recs {
			out = append(out, r.Scenario+"/"+r.RowID+":"+r.Action)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		q    store.AuditQuery
		want string
	}{
		{store.AuditQuery{Limit: 10}, "@user/carol:delete @task/m1:state memos/m1:update @target/hook:create memos/m1:create"},
		{store.AuditQuery{Limit: 2}, "@user/carol:delete @task/m1:state"},
		{store.AuditQuery{Limit: 2, BeforeID: last}, "@task/m1:state memos/m1:update"},
		{store.AuditQuery{Limit: 10, Who: "alice"}, "@user/carol:delete @task/m1:state memos/m1:create"},
		{store.AuditQuery{Limit: 10, Scenario: "memos"}, "memos/m1:update memos/m1:create"},
		{store.AuditQuery{Limit: 10, Scenario: store.AuditKindTarget}, "@target/hook:create"},
		{store.AuditQuery{Limit: 10, Action: store.AuditCreate, Who: "bob (token ci)"}, "@target/hook:create"},
		{store.AuditQuery{Limit: 10, RowID: "m1", Who: "alice"}, "@task/m1:state memos/m1:create"},
		{store.AuditQuery{Limit: 10, Who: "nobody"}, ""},
	} {
		if got := actions(c.q); got != c.want {
			t.Errorf("QueryAudit(%+v) = %q, want %q", c.q, got, c.want)
		}
	}
	for _, n := range []int{0, store.MaxAuditPage + 1} {
		if _, err := s.QueryAudit(ctx, store.AuditQuery{Limit: n}); !errors.Is(err, task.ErrInvalid) {
			t.Errorf("limit %d = %v, want ErrInvalid", n, err)
		}
	}
}
