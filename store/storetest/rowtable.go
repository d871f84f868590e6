package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// RowTableStore is a driver that offers store.RowTable.
type RowTableStore interface {
	store.Store
	store.RowTable
}

// RunRowTable is the conformance suite of store.RowTable. newStore must
// return a new, empty store for each call; RunRowTable closes it.
func RunRowTable(t *testing.T, newStore func(t *testing.T) RowTableStore) {
	t.Helper()
	setup := func(t *testing.T) *rtBundle {
		t.Helper()
		t.Parallel()
		s := newStore(t)
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("close store: %v", err)
			}
		})
		b := &rtBundle{t: t, s: s}
		// 30 memos rows, m00..m29, and 3 rows of another scenario.
		for i := range 30 {
			b.insert(scenario, fmt.Sprintf("m%02d", i), map[string]any{
				"title": fmt.Sprintf("Title %c", 'z'-rune(i%26)), "n": i % 7,
				"content": map[bool]string{true: "Buy ZEBRA food", false: "water plants"}[i%10 == 3],
			})
		}
		for i := range 3 {
			b.insert("other", fmt.Sprintf("o%d", i), map[string]any{"title": "zebra elsewhere"})
		}
		if err := s.PrepareRowTable(t.Context(), scenario, []string{"title", "n"}); err != nil {
			t.Fatalf("PrepareRowTable: %v", err)
		}
		return b
	}
	tests := []struct {
		name string
		fn   func(b *rtBundle)
	}{
		{"FirstPageInIDOrder", func(b *rtBundle) {
			p := b.query(store.RowQuery{Scenario: scenario, Limit: 10})
			b.wantCounts(p, 30, 30)
			b.wantIDs(p, ids(0, 10))
		}},
		{"PagesDoNotOverlap", func(b *rtBundle) {
			var got []string
			for off := 0; off < 30; off += 7 {
				got = append(got, rowIDs(b.query(store.RowQuery{Scenario: scenario, Offset: off, Limit: 7,
					Sort: store.RowSort{Field: "n"}}).Rows)...)
			}
			slices.Sort(got)
			if !slices.Equal(got, ids(0, 30)) {
				t.Errorf("pages sorted by n = %v, want every row once", got)
			}
		}},
		{"EveryPageIsASliceOfTheWhole", func(b *rtBundle) {
			for _, so := range []store.RowSort{{}, {Desc: true}, {Field: "n"}, {Field: "n", Desc: true},
				{Field: "title", Desc: true}, {Column: store.SortIsActive, Desc: true}} {
				all := rowIDs(b.query(store.RowQuery{Scenario: scenario, Limit: 500, Sort: so}).Rows)
				for _, lim := range []int{1, 4, 7} {
					for off := 0; off <= 31; off++ {
						got := rowIDs(b.query(store.RowQuery{Scenario: scenario, Limit: lim, Offset: off, Sort: so}).Rows)
						want := all[min(off, len(all)):min(off+lim, len(all))]
						if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
							b.t.Fatalf("sort %+v offset %d limit %d: %v, want %v", so, off, lim, got, want)
						}
					}
				}
			}
		}},
		{"SortByFieldAndColumn", func(b *rtBundle) {
			p := b.query(store.RowQuery{Scenario: scenario, Limit: 500, Sort: store.RowSort{Field: "title", Desc: true}})
			var titles []string
			for _, r := range p.Rows {
				titles = append(titles, fmt.Sprint(r.Fields["title"]))
			}
			if !slices.IsSortedFunc(titles, func(a, c string) int { return -cmpStr(a, c) }) || len(titles) != 30 {
				b.t.Errorf("titles descending = %v", titles)
			}
			p = b.query(store.RowQuery{Scenario: scenario, Limit: 3, Sort: store.RowSort{Column: store.SortID, Desc: true}})
			b.wantIDs(p, []string{"m29", "m28", "m27"})
			p = b.query(store.RowQuery{Scenario: scenario, Limit: 3, Sort: store.RowSort{Column: store.SortNextFire}})
			b.wantCounts(p, 30, 30)
		}},
		{"NextFireIdleLast", nextFireIdleLast},
		{"DeepPage", func(b *rtBundle) {
			p := b.query(store.RowQuery{Scenario: scenario, Offset: 28, Limit: 10})
			b.wantIDs(p, []string{"m28", "m29"})
			p = b.query(store.RowQuery{Scenario: scenario, Offset: 40, Limit: 10})
			b.wantIDs(p, nil)
		}},
		{"SearchSubstringIgnoringCase", func(b *rtBundle) {
			p := b.query(store.RowQuery{Scenario: scenario, Search: "zebr", Limit: 10})
			b.wantCounts(p, 30, 3)
			b.wantIDs(p, []string{"m03", "m13", "m23"})
			p = b.query(store.RowQuery{Scenario: scenario, Search: "ZEBRA FOOD", Limit: 1, Offset: 1})
			b.wantCounts(p, 30, 3)
			b.wantIDs(p, []string{"m13"})
		}},
		{"SearchChinese", func(b *rtBundle) {
			b.insert(scenario, "c1", map[string]any{"title": "每天早上提醒我喝水"})
			b.insert(scenario, "c2", map[string]any{"title": "提醒", "content": "我喝茶"})
			b.insert(scenario, "c3", map[string]any{"title": "周末提醒我浇花"})
			p := b.query(store.RowQuery{Scenario: scenario, Search: "提醒我", Limit: 10})
			b.wantCounts(p, 33, 2)
			b.wantIDs(p, []string{"c1", "c3"})
			p = b.query(store.RowQuery{Scenario: scenario, Search: "早上提醒", Limit: 10})
			b.wantCounts(p, 33, 1)
			b.wantIDs(p, []string{"c1"})
			p = b.query(store.RowQuery{Scenario: scenario, Search: "我喝水吧", Limit: 10})
			b.wantCounts(p, 33, 0)
		}},
		{"SearchTwoChineseCharacters", func(b *rtBundle) {
			b.insert(scenario, "c1", map[string]any{"title": "写周报"})
			b.insert(scenario, "c2", map[string]any{"title": "值班", "content": "夜里"})
			b.insert(scenario, "c3", map[string]any{"title": "周末", "content": "报名"})
			p := b.query(store.RowQuery{Scenario: scenario, Search: "周报", Limit: 10})
			b.wantCounts(p, 33, 1)
			b.wantIDs(p, []string{"c1"})
			p = b.query(store.RowQuery{Scenario: scenario, Search: " 值班 ", Limit: 10})
			b.wantCounts(p, 33, 1)
			b.wantIDs(p, []string{"c2"})
			p = b.query(store.RowQuery{Scenario: scenario, Search: "周", Limit: 10})
			b.wantCounts(p, 33, 2)
			b.wantIDs(p, []string{"c1", "c3"})
			p = b.query(store.RowQuery{Scenario: scenario, Search: "%报", Limit: 10})
			b.wantCounts(p, 33, 0)
			p = b.query(store.RowQuery{Scenario: scenario, Search: "周报", Limit: 10,
				Filter: store.RowFilter{State: store.RowStateOff}})
			b.wantCounts(p, 33, 0)
		}},
		{"FilterFailing", func(b *rtBundle) {
			// A failing row's last run delivered nothing (dead, timeout,
			// rejected); any other last status, or none, is not failing.
			for id, last := range map[string]string{"g1": "dead", "g2": "timeout", "g3": "rejected",
				"g4": "done", "g5": "cancelled", "g6": "unschedulable"} {
				err := b.s.InsertRow(b.t.Context(), &task.Row{Scenario: scenario, ID: id, IsActive: 1, LastStatus: last,
					Fields: map[string]any{"title": "g " + id}})
				if err != nil {
					b.t.Fatalf("InsertRow(%s): %v", id, err)
				}
			}
			p := b.query(store.RowQuery{Scenario: scenario, Limit: 10, Filter: store.RowFilter{State: store.RowStateFailing}})
			b.wantCounts(p, 36, 3)
			b.wantIDs(p, []string{"g1", "g2", "g3"})
			p = b.query(store.RowQuery{Scenario: scenario, Limit: 10, Search: "g g3", Filter: store.RowFilter{State: store.RowStateFailing}})
			b.wantCounts(p, 36, 1)
			b.wantIDs(p, []string{"g3"})
		}},
		{"Filters", func(b *rtBundle) {
			now := time.Now()
			ins := func(id string, active int, next time.Time, channel any) {
				b.t.Helper()
				f := map[string]any{"title": "f " + id}
				if channel != nil {
					f["channel"] = channel
				}
				err := b.s.InsertRow(b.t.Context(), &task.Row{Scenario: scenario, ID: id, IsActive: active, NextFire: next, Fields: f})
				if err != nil {
					b.t.Fatalf("InsertRow(%s): %v", id, err)
				}
			}
			ins("f1", -1, time.Time{}, "email")
			ins("f2", -1, time.Time{}, "sms")
			ins("f3", 0, now.Add(10*time.Minute), "email") // off: not due
			ins("f4", 1, now.Add(10*time.Minute), "email")
			ins("f5", 1, now.Add(59*time.Minute), nil)
			ins("f6", 1, now.Add(2*time.Hour), "sms")
			ins("f7", 1, now.Add(-time.Minute), "")
			if err := b.s.PrepareRowTable(b.t.Context(), scenario, []string{"channel"}); err != nil {
				b.t.Fatal(err)
			}
			total := int64(37)
			p := b.query(store.RowQuery{Scenario: scenario, Limit: 10, Filter: store.RowFilter{State: store.RowStateError}})
			b.wantCounts(p, total, 2)
			b.wantIDs(p, []string{"f1", "f2"})
			p = b.query(store.RowQuery{Scenario: scenario, Limit: 10, Filter: store.RowFilter{State: store.RowStateOff}})
			b.wantCounts(p, total, 1)
			b.wantIDs(p, []string{"f3"})
			p = b.query(store.RowQuery{Scenario: scenario, Limit: 10, Filter: store.RowFilter{DueBy: now.Add(time.Hour)}})
			b.wantCounts(p, total, 3) // f4, f5 and the overdue f7
			b.wantIDs(p, []string{"f4", "f5", "f7"})
			p = b.query(store.RowQuery{Scenario: scenario, Limit: 10, Sort: store.RowSort{Column: store.SortNextFire, Desc: true},
				Filter: store.RowFilter{DueBy: now.Add(time.Hour)}})
			b.wantIDs(p, []string{"f5", "f4", "f7"})
			p = b.query(store.RowQuery{Scenario: scenario, Limit: 10, Filter: store.RowFilter{Field: "channel", Value: "sms"}})
			b.wantCounts(p, total, 2)
			b.wantIDs(p, []string{"f2", "f6"})
			// The default channel's filter also keeps the rows that leave it out.
			p = b.query(store.RowQuery{Scenario: scenario, Limit: 10, Offset: 1,
				Filter: store.RowFilter{Field: "channel", Value: "email", OrMissing: true}})
			b.wantCounts(p, total, 30+5) // the 30 m rows have no channel
			p = b.query(store.RowQuery{Scenario: scenario, Limit: 10,
				Filter: store.RowFilter{State: store.RowStateError, Field: "channel", Value: "email"}})
			b.wantCounts(p, total, 1)
			b.wantIDs(p, []string{"f1"})
			p = b.query(store.RowQuery{Scenario: scenario, Limit: 10, Search: "f f",
				Filter: store.RowFilter{Field: "channel", Value: "sms"}})
			b.wantCounts(p, total, 2)
			b.wantIDs(p, []string{"f2", "f6"})
			_, err := b.s.QueryRows(b.t.Context(), store.RowQuery{Scenario: scenario, Limit: 10,
				Filter: store.RowFilter{State: "maybe"}})
			if !errors.Is(err, task.ErrInvalid) {
				b.t.Errorf("an unknown state: %v, want task.ErrInvalid", err)
			}
			_, err = b.s.QueryRows(b.t.Context(), store.RowQuery{Scenario: scenario, Limit: 10,
				Filter: store.RowFilter{Field: "a'b", Value: "x"}})
			if !errors.Is(err, task.ErrInvalid) {
				b.t.Errorf("a bad field: %v, want task.ErrInvalid", err)
			}
		}},
		{"SearchError", func(b *rtBundle) {
			row, err := b.s.GetRow(b.t.Context(), scenario, "m07")
			if err != nil {
				b.t.Fatal(err)
			}
			err = b.s.ApplySync(b.t.Context(), store.ApplySyncParams{Scenario: scenario, RowID: "m07",
				RowVersion: row.Version, IsActive: -1, Error: "cron_para: Unknown Schedule", Now: time.Now()})
			if err != nil {
				b.t.Fatal(err)
			}
			p := b.query(store.RowQuery{Scenario: scenario, Search: "unknown sched", Limit: 10})
			b.wantCounts(p, 30, 1)
			b.wantIDs(p, []string{"m07"})
		}},
		{"SearchIsLiteral", func(b *rtBundle) {
			for _, s := range []string{`'; DROP TABLE rows; --`, `" OR 1=1 --`, `zebra*`, `NEAR(a b)`, `%%%`, `___`, `) OR (`} {
				p := b.query(store.RowQuery{Scenario: scenario, Search: s, Limit: 10})
				b.wantCounts(p, 30, 0)
			}
			b.wantCounts(b.query(store.RowQuery{Scenario: scenario, Limit: 1}), 30, 30)
		}},
		{"EditsAndDeletesFollow", func(b *rtBundle) {
			ctx := b.t.Context()
			if _, err := b.s.UpdateRowFields(ctx, store.UpdateRowParams{Scenario: scenario, ID: "m05",
				Fields: map[string]any{"title": "now a zebra"}}); err != nil {
				b.t.Fatal(err)
			}
			if err := b.s.DeleteRow(ctx, scenario, "m13"); err != nil {
				b.t.Fatal(err)
			}
			p := b.query(store.RowQuery{Scenario: scenario, Search: "zebra", Limit: 10})
			b.wantCounts(p, 29, 3)
			b.wantIDs(p, []string{"m03", "m05", "m23"})
			b.insert(scenario, "m99", map[string]any{"title": "zebra too"})
			b.wantCounts(b.query(store.RowQuery{Scenario: scenario, Search: "zebra", Limit: 10}), 30, 4)
		}},
		{"PrepareIsIdempotent", func(b *rtBundle) {
			if err := b.s.PrepareRowTable(b.t.Context(), scenario, []string{"title", "content"}); err != nil {
				b.t.Fatal(err)
			}
			b.wantCounts(b.query(store.RowQuery{Scenario: scenario, Search: "zebra", Limit: 10}), 30, 3)
		}},
		{"BadQueries", func(b *rtBundle) {
			bad := []store.RowQuery{
				{Scenario: scenario, Limit: 0},
				{Scenario: scenario, Limit: store.MaxRowPage + 1},
				{Scenario: scenario, Limit: 10, Offset: -1},
				{Scenario: scenario, Limit: 10, Search: "ab"},
				{Scenario: scenario, Limit: 10, Search: string(make([]byte, store.MaxRowSearch+1))},
				{Scenario: scenario, Limit: 10, Sort: store.RowSort{Field: "content"}}, // not prepared
				{Scenario: scenario, Limit: 10, Sort: store.RowSort{Field: "x') DROP"}},
				{Scenario: scenario, Limit: 10, Sort: store.RowSort{Column: "fields"}},
				{Scenario: scenario, Limit: 10, Sort: store.RowSort{Column: "id", Field: "n"}},
			}
			for _, q := range bad {
				_, err := b.s.QueryRows(b.t.Context(), q)
				if !errors.Is(err, task.ErrInvalid) {
					b.t.Errorf("QueryRows(%+v) = %v, want task.ErrInvalid", q, err)
				}
			}
			if err := b.s.PrepareRowTable(b.t.Context(), scenario, []string{"a'b"}); !errors.Is(err, task.ErrInvalid) {
				b.t.Errorf("PrepareRowTable(a'b) = %v, want task.ErrInvalid", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(setup(t)) })
	}
}

type rtBundle struct {
	t *testing.T
	s RowTableStore
}

func (b *rtBundle) insert(sc, id string, fields map[string]any) {
	b.t.Helper()
	if err := b.s.InsertRow(b.t.Context(), &task.Row{Scenario: sc, ID: id, IsActive: 1, Fields: fields}); err != nil {
		b.t.Fatalf("InsertRow(%s): %v", id, err)
	}
}

func (b *rtBundle) query(q store.RowQuery) *store.RowPage {
	b.t.Helper()
	p, err := b.s.QueryRows(b.t.Context(), q)
	if err != nil {
		b.t.Fatalf("QueryRows(%+v): %v", q, err)
	}
	return p
}

func (b *rtBundle) wantCounts(p *store.RowPage, total, filtered int64) {
	b.t.Helper()
	if p.Total != total || p.Filtered != filtered {
		b.t.Errorf("total, filtered = %d, %d; want %d, %d", p.Total, p.Filtered, total, filtered)
	}
}

func (b *rtBundle) wantIDs(p *store.RowPage, want []string) {
	b.t.Helper()
	if got := rowIDs(p.Rows); !slices.Equal(got, want) {
		b.t.Errorf("ids = %v, want %v", got, want)
	}
}

func rowIDs(rows []*task.Row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.ID)
	}
	return out
}

// ids returns m<from>..m<to-1>, two digits each.
func ids(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("m%02d", i))
	}
	return out
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
