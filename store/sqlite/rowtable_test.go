package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// TestRowTablePlans checks that every page query of the web table is served
// by an index: no plan step scans rows, and no sort reads more than the
// search's matches.
func TestRowTablePlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for i := range 200 {
		r := &task.Row{Scenario: "memos", ID: fmt.Sprintf("m%04d", i), IsActive: 1,
			Fields: map[string]any{"title": fmt.Sprintf("title %d", i), "when": "every 1h"}}
		if err := s.InsertRow(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PrepareRowTable(ctx, "memos", []string{"title", "when"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	sorts := []store.RowSort{
		{}, {Desc: true}, {Field: "title"}, {Field: "when", Desc: true},
		{Column: store.SortIsActive}, {Column: store.SortNextFire}, {Column: store.SortNextFire, Desc: true},
		{Column: store.SortLastFire},
	}
	for _, so := range sorts {
		order, err := s.orderBy(ctx, so)
		if err != nil {
			t.Fatal(err)
		}
		for _, search := range []bool{false, true} {
			q := pageSQL(order, search)
			args := []any{"memos", 10, 100}
			if search {
				args = []any{`"title"`, "memos", 10, 100}
			}
			plan := explain(t, s, q, args...)
			t.Logf("sort %+v search %v:\n%s", so, search, plan)
			if strings.Contains(plan, "SCAN rows\n") || strings.HasSuffix(plan, "SCAN rows") {
				t.Errorf("sort %+v search %v scans rows:\n%s", so, search, plan)
			}
			if !search {
				ids := explain(t, s, pageIDsSQL(order), "memos", 10, 100)
				if !strings.Contains(ids, "COVERING INDEX") || strings.Contains(ids, "TEMP B-TREE") {
					t.Errorf("sort %+v: the page's ids do not come from one covering index in order:\n%s", so, ids)
				}
			}
			if search && !strings.Contains(plan, "VIRTUAL TABLE INDEX") {
				t.Errorf("search does not use the trigram index:\n%s", plan)
			}
		}
	}
	for _, so := range sorts {
		order, err := s.orderBy(ctx, so)
		if err != nil {
			t.Fatal(err)
		}
		plan := explain(t, s, broadPageSQL(order, ftsMatch, ""), "memos", `"title"`, 10, 100)
		t.Logf("broad search, sort %+v:\n%s", so, plan)
		if strings.Contains(plan, "SCAN rows\n") || !strings.Contains(plan, "VIRTUAL TABLE INDEX") {
			t.Errorf("broad search, sort %+v:\n%s", so, plan)
		}
	}
	cond, condArgs, err := filterSQL(store.RowFilter{DueBy: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	plan := explain(t, s, `SELECT count(*) FROM rows WHERE scenario = ?`+cond, append([]any{"memos"}, condArgs...)...)
	t.Logf("due filter count:\n%s", plan)
	if !strings.Contains(plan, "ix_rows_fire_order (scenario=? AND <expr>=? AND next_fire>? AND next_fire<?)") {
		t.Errorf("the due filter is not a range of ix_rows_fire_order:\n%s", plan)
	}
	plan = explain(t, s, rowTasksSQL(3), "memos", "m0001", "m0002", "m0003")
	t.Logf("the page's tasks:\n%s", plan)
	if !strings.Contains(plan, "ix_task_row") {
		t.Errorf("the page's tasks are not read through ix_task_row:\n%s", plan)
	}
	plan = explain(t, s, searchCountSQL, `"title"`, "memos")
	t.Logf("search count:\n%s", plan)
	if !strings.Contains(plan, "VIRTUAL TABLE INDEX") || strings.Contains(plan, "SCAN rows\n") {
		t.Errorf("search count plan:\n%s", plan)
	}
}

// explain returns the EXPLAIN QUERY PLAN details of q, one step a line.
func explain(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	rs, err := s.r.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("explain %s: %v", q, err)
	}
	defer rs.Close()
	var lines []string
	for rs.Next() {
		var id, parent, notused int
		var detail string
		if err := rs.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("explain %s: %v", q, err)
	}
	return strings.Join(lines, "\n")
}

// TestBroadSearchPlanAgrees checks that both search plans (sort the
// matches; walk the sort index) give the same pages.
func TestBroadSearchPlanAgrees(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "broad.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for i := range 60 {
		r := &task.Row{Scenario: "memos", ID: fmt.Sprintf("m%04d", i), IsActive: 1,
			Fields: map[string]any{"title": fmt.Sprintf("Title %d", i%9), "note": map[bool]string{true: "zebra 斑马", false: "lion"}[i%3 == 0]}}
		if i%2 == 0 { // half the rows have a next fire, some of them the same
			r.NextFire = time.Date(2031, 1, 1, 0, i%7, 0, 0, time.UTC)
		}
		if err := s.InsertRow(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.InsertRow(ctx, &task.Row{Scenario: "other", ID: "o1", Fields: map[string]any{"note": "zebra"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PrepareRowTable(ctx, "memos", []string{"title"}); err != nil {
		t.Fatal(err)
	}
	// Both plans also agree with a filter and with a search too short for
	// a trigram (two Chinese characters: a LIKE).
	for _, c := range []struct {
		search string
		filter store.RowFilter
		want   int64
	}{
		{"zebra", store.RowFilter{}, 20},
		{"斑马", store.RowFilter{}, 20},
		{"zebra", store.RowFilter{Field: "title", Value: "Title 3"}, 7},
		{"斑马", store.RowFilter{Field: "title", Value: "title 6"}, 6}, // the SQLite driver ignores ASCII case
	} {
		for _, so := range []store.RowSort{{}, {Desc: true}, {Field: "title"}, {Field: "title", Desc: true},
			{Column: store.SortNextFire}, {Column: store.SortNextFire, Desc: true}} {
			for _, off := range []int{0, 3, 15, 19, 25} {
				q := store.RowQuery{Scenario: "memos", Search: c.search, Filter: c.filter, Sort: so, Offset: off, Limit: 4}
				narrow, err := s.queryRows(ctx, q, 1<<62)
				if err != nil {
					t.Fatal(err)
				}
				broad, err := s.queryRows(ctx, q, 0)
				if err != nil {
					t.Fatal(err)
				}
				ids := func(p *store.RowPage) string {
					var out []string
					for _, r := range p.Rows {
						out = append(out, r.ID)
					}
					return fmt.Sprint(p.Filtered, out)
				}
				if ids(narrow) != ids(broad) {
					t.Errorf("%+v sort %+v offset %d: sorted matches %s, index walk %s", c, so, off, ids(narrow), ids(broad))
				}
				if narrow.Filtered != c.want {
					t.Errorf("%+v: %d matches, want %d", c, narrow.Filtered, c.want)
				}
			}
		}
	}
}
