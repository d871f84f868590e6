package webtable_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/task"
	"cronsheet/webtable"
)

// exportAll returns the memos table of st as the CSV export writes it,
// every column.
func exportAll(t *testing.T, st webtable.TableStore) string {
	t.Helper()
	rec := httptest.NewRecorder()
	memosTable(t, st).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/scenarios/memos/table.csv?order[0][column]=0&order[0][dir]=asc", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("export: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// TestCSVExportImportRoundTrip: a table exported as CSV imports into an
// empty table as the same rows, and exports again byte for byte the same:
// every column type (id, text, schedule, enum, switch, status, time), the
// formula guard on phone numbers and other cells starting with = + - @,
// cells that start with an apostrophe themselves, commas, quotes, line
// breaks and non-ASCII text.
func TestCSVExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	src, dst := fullapi.Setup(t), fullapi.Setup(t)
	rows := []map[string]any{
		{"memo_id": "r1", "title": "call +8613800138000", "content": "x", "when": "daily 08:30",
			"channel": "sms", "to": "+8613800138000", "active": "1"},
		{"memo_id": "r2", "title": "=SUM(A1:A2)", "content": "- buy milk\n- and bread, \"fresh\"", "when": "cron */5 * * * * *",
			"channel": "email", "to": "ann@example.com", "active": "0"},
		{"memo_id": "r3", "title": "'quoted already", "content": "'+not a formula", "when": "every 30m",
			"channel": "outbox", "active": "1"},
		{"memo_id": "r4", "title": "@mention", "content": "''two", "when": "weekly mon,thu 09:00",
			"channel": "outbox", "to": "-", "active": "1"},
		{"memo_id": "r5", "title": "值班提醒 ü", "content": "\ttabbed", "when": "monthly last 18:00",
			"channel": "sms", "to": "+14155550100", "active": "0"},
	}
	for _, f := range rows {
		active := 1
		if f["active"] == "0" {
			active = 0
		}
		if err := src.Store.InsertRow(context.Background(), &task.Row{Scenario: "memos", ID: f["memo_id"].(string),
			IsActive: active, Fields: f}); err != nil {
			t.Fatal(err)
		}
	}
	first := exportAll(t, src.Store)
	if !strings.Contains(first, "'+8613800138000") || !strings.Contains(first, "'=SUM") {
		t.Fatalf("export does not guard formulas:\n%s", first)
	}
	header, err := csv.NewReader(strings.NewReader(first)).Read()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("columns: %v", header)

	got := apitest.Want[importAnswer](t, dst.Do(t, http.MethodPost, importPath, first, "Content-Type", "text/csv"), http.StatusCreated)
	if got.Imported != len(rows) {
		t.Fatalf("imported %d rows, want %d: %+v", got.Imported, len(rows), got)
	}
	for _, f := range rows {
		id := f["memo_id"].(string)
		r, err := dst.Store.GetRow(context.Background(), "memos", id)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range f {
			if fmt.Sprint(r.Fields[k]) != v {
				t.Errorf("row %s field %s = %q after the round trip, want %q", id, k, r.Fields[k], v)
			}
		}
	}
	if second := exportAll(t, dst.Store); second != first {
		t.Errorf("export after import differs:\n%s\nfirst export:\n%s", second, first)
	}
}
