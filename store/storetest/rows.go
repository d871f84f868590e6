package storetest

import (
	"encoding/json"
	"slices"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

func rowCases() []testCase {
	return []testCase{
		{name: "InsertAndGet", fn: testInsertAndGetRow},
		{name: "InsertDuplicate", fn: testInsertRowDuplicate},
		{name: "InsertWithoutID", fn: testInsertRowWithoutID},
		{name: "GetMissing", fn: testGetRowMissing},
		{name: "UpdateFields", fn: testUpdateRowFields},
		{name: "UpdateFieldsVersionConflict", fn: testUpdateRowFieldsConflict},
		{name: "UpdateFieldsMissing", fn: testUpdateRowFieldsMissing},
		{name: "Delete", fn: testDeleteRow},
		{name: "DeleteMissing", fn: testDeleteRowMissing},
		{name: "ListPaging", fn: testListRowsPaging},
		{name: "ListUnfetched", fn: testListUnfetchedRows},
		{name: "FieldTypesAreJSON", fn: testRowFieldTypes},
	}
}

// testRowFieldTypes: every driver returns field values in the types
// encoding/json gives with UseNumber (json.Number, map[string]any, []any),
// whatever its storage keeps, so callers' type switches and exports see the
// same values on every driver.
func testRowFieldTypes(b *bundle) {
	in := &task.Row{Scenario: scenario, ID: "r1", Fields: map[string]any{
		"n": 3, "x": 1.5, "big": int64(1) << 40, "s": "t", "b": true,
		"sub": map[string]any{"k": 2}, "list": []any{1, "a"}}}
	b.noErr("InsertRow", b.s.InsertRow(b.ctx, in))
	f := b.getRow(scenario, "r1").Fields
	for k, want := range map[string]json.Number{"n": "3", "x": "1.5", "big": "1099511627776"} {
		if got, ok := f[k].(json.Number); !ok || got != want {
			b.t.Errorf("field %s = %#v, want json.Number(%q)", k, f[k], want)
		}
	}
	if sub, ok := f["sub"].(map[string]any); !ok || sub["k"] != json.Number("2") {
		b.t.Errorf("field sub = %#v, want map[string]any{k: json.Number(2)}", f["sub"])
	}
	if list, ok := f["list"].([]any); !ok || len(list) != 2 || list[0] != json.Number("1") || list[1] != "a" {
		b.t.Errorf("field list = %#v, want []any{json.Number(1), a}", f["list"])
	}
	if f["s"] != "t" || f["b"] != true {
		b.t.Errorf("fields s, b = %#v, %#v, want t, true", f["s"], f["b"])
	}
}

func testInsertAndGetRow(b *bundle) {
	in := &task.Row{Scenario: scenario, ID: "r1", IsActive: task.RowActive,
		Fields: map[string]any{"memo": "hello", "n": 3, "flag": false}}
	b.noErr("InsertRow", b.s.InsertRow(b.ctx, in))
	got := b.getRow(scenario, "r1")
	if got.Scenario != scenario || got.ID != "r1" {
		b.t.Errorf("key = %s/%s, want %s/r1", got.Scenario, got.ID, scenario)
	}
	if !sameJSON(got.Fields, in.Fields) {
		b.t.Errorf("Fields = %v, want %v", got.Fields, in.Fields)
	}
	if got.IsFetched != 0 || got.Version != 1 || got.IsActive != task.RowActive {
		b.t.Errorf("is_fetched=%d version=%d is_active=%d, want 0 1 1", got.IsFetched, got.Version, got.IsActive)
	}
	if got.CreatedAt.IsZero() || got.UpdatedAt.IsZero() {
		b.t.Errorf("created_at=%v updated_at=%v, want both set", got.CreatedAt, got.UpdatedAt)
	}
	utc(b.t, "CreatedAt", got.CreatedAt)
	// The same id in another scenario is another row.
	b.insertRow("other", "r1")
}

func testInsertRowDuplicate(b *bundle) {
	b.insertRow(scenario, "r1")
	err := b.s.InsertRow(b.ctx, &task.Row{Scenario: scenario, ID: "r1"})
	b.wantErr("InsertRow duplicate", err, task.ErrConflict)
}

func testInsertRowWithoutID(b *bundle) {
	err := b.s.InsertRow(b.ctx, &task.Row{Scenario: scenario})
	b.wantErr("InsertRow without id", err, task.ErrInvalid)
}

func testGetRowMissing(b *bundle) {
	_, err := b.s.GetRow(b.ctx, scenario, "nope")
	b.wantErr("GetRow missing", err, task.ErrNotFound)
}

func testUpdateRowFields(b *bundle) {
	b.insertRow(scenario, "r1")
	// Sync it first, so the edit visibly resets is_fetched.
	b.noErr("ApplySync", b.syncRow("r1", nil))
	if r := b.getRow(scenario, "r1"); r.IsFetched != 1 {
		b.t.Fatalf("is_fetched after sync = %d, want 1", r.IsFetched)
	}
	fields := map[string]any{"memo": "changed"}
	got, err := b.s.UpdateRowFields(b.ctx, store.UpdateRowParams{Scenario: scenario, ID: "r1", Fields: fields})
	b.noErr("UpdateRowFields", err)
	if got.Version != 2 || got.IsFetched != 0 || !sameJSON(got.Fields, fields) {
		b.t.Errorf("returned version=%d is_fetched=%d fields=%v, want 2 0 %v", got.Version, got.IsFetched, got.Fields, fields)
	}
	stored := b.getRow(scenario, "r1")
	if stored.Version != 2 || stored.IsFetched != 0 || !sameJSON(stored.Fields, fields) {
		b.t.Errorf("stored version=%d is_fetched=%d fields=%v, want 2 0 %v", stored.Version, stored.IsFetched, stored.Fields, fields)
	}
	// A matching IfVersion passes.
	got, err = b.s.UpdateRowFields(b.ctx, store.UpdateRowParams{Scenario: scenario, ID: "r1", Fields: fields, IfVersion: 2})
	b.noErr("UpdateRowFields IfVersion=2", err)
	if got.Version != 3 {
		b.t.Errorf("version = %d, want 3", got.Version)
	}
}

func testUpdateRowFieldsConflict(b *bundle) {
	b.insertRow(scenario, "r1")
	_, err := b.s.UpdateRowFields(b.ctx, store.UpdateRowParams{
		Scenario: scenario, ID: "r1", Fields: map[string]any{"memo": "x"}, IfVersion: 7})
	b.wantErr("UpdateRowFields stale version", err, task.ErrConflict)
	if r := b.getRow(scenario, "r1"); r.Version != 1 || r.Fields["memo"] != "text of r1" {
		b.t.Errorf("row changed by a failed update: version=%d fields=%v", r.Version, r.Fields)
	}
}

func testUpdateRowFieldsMissing(b *bundle) {
	_, err := b.s.UpdateRowFields(b.ctx, store.UpdateRowParams{Scenario: scenario, ID: "nope"})
	b.wantErr("UpdateRowFields missing", err, task.ErrNotFound)
}

func testDeleteRow(b *bundle) {
	before := b.addTask(newTask("t1", "r1"))
	b.claim("node-a", 10, at(time.Hour))
	b.noErr("DeleteRow", b.s.DeleteRow(b.ctx, scenario, "r1"))
	_, err := b.s.GetRow(b.ctx, scenario, "r1")
	b.wantErr("GetRow after delete", err, task.ErrNotFound)
	after := b.getTask("t1")
	if after.IsEnable != 0 || after.Version <= before.Version {
		b.t.Errorf("task after row delete: is_enable=%d version=%d, want 0 and > %d", after.IsEnable, after.Version, before.Version)
	}
	if got := b.claim("node-b", 10, at(time.Hour)); len(got) != 0 {
		b.t.Errorf("claimed %d tasks of a deleted row", len(got))
	}
}

func testDeleteRowMissing(b *bundle) {
	b.wantErr("DeleteRow missing", b.s.DeleteRow(b.ctx, scenario, "nope"), task.ErrNotFound)
}

func testListRowsPaging(b *bundle) {
	for _, id := range []string{"r4", "r2", "r5", "r1", "r3"} {
		b.insertRow(scenario, id)
	}
	b.insertRow("other", "r0")
	var got []string
	after := ""
	for range 10 {
		page, err := b.s.ListRows(b.ctx, scenario, after, 2)
		b.noErr("ListRows", err)
		if len(page) > 2 {
			b.t.Fatalf("page of %d rows, limit 2", len(page))
		}
		if len(page) == 0 {
			break
		}
		for _, r := range page {
			if r.Scenario != scenario {
				b.t.Errorf("row %s/%s listed under %s", r.Scenario, r.ID, scenario)
			}
			got = append(got, r.ID)
		}
		after = page[len(page)-1].ID
	}
	if want := []string{"r1", "r2", "r3", "r4", "r5"}; !slices.Equal(got, want) {
		b.t.Errorf("ListRows pages = %v, want %v", got, want)
	}
}

func testListUnfetchedRows(b *bundle) {
	b.insertRow(scenario, "r1")
	b.insertRow(scenario, "r2")
	b.insertRow("other", "r3")
	b.noErr("ApplySync r2", b.syncRow("r2", nil))

	ids := func(limit int) []string {
		rows, err := b.s.ListUnfetchedRows(b.ctx, limit)
		b.noErr("ListUnfetchedRows", err)
		var out []string
		for _, r := range rows {
			if r.IsFetched != 0 {
				b.t.Errorf("row %s/%s listed with is_fetched=%d", r.Scenario, r.ID, r.IsFetched)
			}
			out = append(out, r.Scenario+"/"+r.ID)
		}
		slices.Sort(out)
		return out
	}
	if got, want := ids(10), []string{"memos/r1", "other/r3"}; !slices.Equal(got, want) {
		b.t.Errorf("unfetched = %v, want %v", got, want)
	}
	if got := ids(1); len(got) != 1 {
		b.t.Errorf("unfetched with limit 1 = %v", got)
	}
	// An edit makes a synced row unfetched again.
	_, err := b.s.UpdateRowFields(b.ctx, store.UpdateRowParams{Scenario: scenario, ID: "r2", Fields: map[string]any{}})
	b.noErr("UpdateRowFields", err)
	if got, want := ids(10), []string{"memos/r1", "memos/r2", "other/r3"}; !slices.Equal(got, want) {
		b.t.Errorf("unfetched after edit = %v, want %v", got, want)
	}
}
