package webtable

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The CSV cell encoding, shared by the export (csvCell) and the import
// (csvValue), so that an exported row imports with the same fields:
//
//   - text is written as it is, with the formula guard of csvSafe (a
//     leading apostrophe before = + - @ tab CR and ');
//   - a value that is not text (a number, true/false, null) and the empty
//     text are written as "=" and their JSON literal: =5, =2.5, =true,
//     =null, ="" — what a spreadsheet reads as the same value;
//   - an empty cell is a field the row does not hold.
//
// Text never starts with a bare "=" in an export (the guard adds an
// apostrophe), so a cell "=" + a JSON scalar is read as that value; any
// other cell starting with "=" (=SUM(A1), written by hand) stays text.

// csvCell is a row field's value as an export cell.
func csvCell(v any) string {
	if s, ok := v.(string); ok {
		if s == "" {
			return `=""`
		}
		return csvSafe(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return csvSafe(fmt.Sprint(v)) // not a JSON scalar; ValidateFields keeps these out
	}
	return "=" + string(b)
}

// csvValue reads an import cell: the value it holds and whether it holds
// one (an empty cell holds none).
func csvValue(cell string) (any, bool) {
	if cell == "" {
		return nil, false
	}
	if v, ok := csvLiteral(cell); ok {
		return v, true
	}
	return csvUnguard(cell), true
}

// csvLiteral reads a cell "=" + one JSON scalar (number, true/false, null
// or a quoted text), numbers as json.Number.
func csvLiteral(cell string) (any, bool) {
	lit, ok := strings.CutPrefix(cell, "=")
	if !ok || lit == "" {
		return nil, false
	}
	switch lit[0] {
	case '"', 't', 'f', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
	default:
		return nil, false
	}
	if !json.Valid([]byte(lit)) { // one JSON value, nothing after it
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(lit))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	switch v.(type) {
	case nil, string, bool, json.Number:
		return v, true
	}
	return nil, false
}
