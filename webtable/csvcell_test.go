package webtable

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestCSVCellRoundTrip: every kind of field value written by csvCell is
// read back by csvValue as the same value and type; text that looks like
// a literal stays text.
func TestCSVCellRoundTrip(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		"plain", "值班 ü", "", " ", "5", "true", "null", `""`, "=5", "=true", `=""`, "'=5", "'", "''x",
		"+8613800138000", "-1", "@x", "=SUM(A1)", "a,b\n\"c\"",
		json.Number("5"), json.Number("-2.5"), json.Number("12345678901234567890"), json.Number("1e3"),
		true, false, nil,
	} {
		cell := csvCell(v)
		got, ok := csvValue(cell)
		if !ok || !reflect.DeepEqual(got, v) {
			t.Errorf("%#v: cell %q reads back as %#v (held %v)", v, cell, got, ok)
		}
	}
}

// TestCSVValueOfHandWrittenCells: cells a person types read as text
// unless they are "=" and a JSON scalar.
func TestCSVValueOfHandWrittenCells(t *testing.T) {
	t.Parallel()
	for cell, want := range map[string]any{
		"5": "5", "true": "true", "=SUM(A1)": "=SUM(A1)", "=[1]": "=[1]", `={"a":1}`: `={"a":1}`,
		"=1 2": "=1 2", "=": "=", "=5": json.Number("5"), "=TRUE": "=TRUE", "=false": false, `="x"`: "x",
		"'=x": "=x", "'text": "'text",
	} {
		if got, ok := csvValue(cell); !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("cell %q reads as %#v, want %#v", cell, got, want)
		}
	}
	if _, ok := csvValue(""); ok {
		t.Error("an empty cell holds a value")
	}
}
