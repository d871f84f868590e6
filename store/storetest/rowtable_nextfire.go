package storetest

import (
	"slices"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// nextFireIdleLast: sorted by next fire, the rows with one come soonest
// first and the rows with none (switched off, invalid, not armed) after
// them in insertion order; descending is the exact reverse. Every page is
// the slice of that order, across the boundary too, with a filter, a
// search and both.
func nextFireIdleLast(b *rtBundle) {
	base := time.Date(2031, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, r := range []struct {
		id      string
		active  int
		next    time.Duration // 0: no next fire
		content string
	}{
		{"s1", 1, 3 * time.Hour, "zebra s1"},
		{"s2", 1, time.Hour, "s2"},
		{"s3", 0, 2 * time.Hour, "zebra s3"}, // off, yet with a next fire
		{"s4", 1, time.Hour, "s4"},           // s2's tie: after it
		{"i1", 0, 0, "zebra i1"},
		{"i2", -1, 0, "i2"},
	} {
		row := &task.Row{Scenario: scenario, ID: r.id, IsActive: r.active, Fields: map[string]any{"content": r.content}}
		if r.next > 0 {
			row.NextFire = base.Add(r.next)
		}
		if err := b.s.InsertRow(b.t.Context(), row); err != nil {
			b.t.Fatalf("InsertRow(%s): %v", r.id, err)
		}
	}
	// The 30 m rows of the setup have no next fire.
	all := append(append([]string{"s2", "s4", "s3", "s1"}, ids(0, 30)...), "i1", "i2")
	b.wantOrder(store.RowQuery{Scenario: scenario}, all)
	p := b.query(store.RowQuery{Scenario: scenario, Offset: 3, Limit: 2, Sort: store.RowSort{Column: store.SortNextFire}})
	b.wantIDs(p, []string{"s1", "m00"}) // the last scheduled row, the first idle one
	off := store.RowFilter{State: store.RowStateOff}
	b.wantOrder(store.RowQuery{Scenario: scenario, Filter: off}, []string{"s3", "i1"})
	b.wantOrder(store.RowQuery{Scenario: scenario, Search: "zebra"}, []string{"s3", "s1", "m03", "m13", "m23", "i1"})
	b.wantOrder(store.RowQuery{Scenario: scenario, Search: "zebra", Filter: off}, []string{"s3", "i1"})
}

// wantOrder checks that q sorted by next fire, ascending, is want, and
// descending its reverse: whole, and every page of 1, 2, 3 and 7 rows at
// every offset.
func (b *rtBundle) wantOrder(q store.RowQuery, want []string) {
	b.t.Helper()
	for _, desc := range []bool{false, true} {
		order := slices.Clone(want)
		if desc {
			slices.Reverse(order)
		}
		q.Sort = store.RowSort{Column: store.SortNextFire, Desc: desc}
		for _, lim := range []int{1, 2, 3, 7, store.MaxRowPage} {
			for q.Offset = 0; q.Offset <= len(order)+1; q.Offset++ {
				q.Limit = lim
				p := b.query(q)
				wantPage := order[min(q.Offset, len(order)):min(q.Offset+lim, len(order))]
				if got := rowIDs(p.Rows); !slices.Equal(got, wantPage) && len(got)+len(wantPage) > 0 {
					b.t.Fatalf("search %q filter %+v desc %v offset %d limit %d: %v, want %v",
						q.Search, q.Filter, desc, q.Offset, lim, got, wantPage)
				}
				if p.Filtered != int64(len(order)) {
					b.t.Fatalf("search %q filter %+v: filtered %d, want %d", q.Search, q.Filter, p.Filtered, len(order))
				}
			}
		}
	}
}
