package webtable

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"cronsheet/store"
	"cronsheet/task"
)

// Bounds on a DataTables request.
const (
	maxTableColumns = 64
	maxTableStart   = 10_000_000
	maxDraw         = 1 << 31
)

// tableRequest is a parsed, validated DataTables request.
type tableRequest struct {
	draw  int
	query store.RowQuery
}

// parseTableRequest reads DataTables' parameters. The draw it returns is
// the request's when that one was valid, so an error can echo it.
func parseTableRequest(form url.Values, cols []Column) (tableRequest, error) {
	var req tableRequest
	draw, err := formInt(form, "draw", 0, 0, maxDraw)
	if err != nil {
		return req, err
	}
	req.draw = draw
	start, err := formInt(form, "start", 0, 0, maxTableStart)
	if err != nil {
		return req, err
	}
	length, err := formInt(form, "length", 10, -1, maxTableStart)
	if err != nil {
		return req, err
	}
	if length == 0 {
		return req, errors.New("length: must be -1 (all, capped) or a positive page size")
	}
	if length == -1 || length > store.MaxRowPage {
		length = store.MaxRowPage // DataTables' "all" is capped too
	}
	req.query.Offset, req.query.Limit = start, length

	search := form.Get("search[value]")
	if len(search) > store.MaxRowSearch {
		return req, fmt.Errorf("search: longer than %d bytes", store.MaxRowSearch)
	}
	if i := strings.IndexFunc(search, isControl); i >= 0 {
		// SQLite's full-text search cuts a text at NUL and fails on it.
		r, _ := utf8.DecodeRuneInString(search[i:])
		return req, fmt.Errorf("search: contains a control character (%U at byte %d); search for text only", r, i)
	}
	req.query.Search = strings.TrimSpace(search)

	// columns[i][data], i = 0, 1, … as long as they come.
	var sent []Column
	for i := 0; ; i++ {
		data, ok := form[fmt.Sprintf("columns[%d][data]", i)]
		if !ok {
			break
		}
		if i >= maxTableColumns {
			return req, fmt.Errorf("columns: more than %d", maxTableColumns)
		}
		col, found := findColumn(cols, data[0])
		if !found {
			return req, fmt.Errorf("columns[%d][data]: unknown column %q", i, task.Truncate(data[0], 64))
		}
		sent = append(sent, col)
	}
	if len(sent) == 0 {
		sent = cols // a bare request: the column model's order
	}
	if _, ok := form["order[1][column]"]; ok {
		return req, errors.New("order: sorting by more than one column is not supported")
	}
	if v, ok := form["order[0][column]"]; ok {
		i, err := strconv.Atoi(v[0])
		if err != nil || i < 0 || i >= len(sent) {
			return req, fmt.Errorf("order[0][column]: must be a column index from 0 to %d", len(sent)-1)
		}
		col := sent[i]
		if !col.Orderable {
			return req, fmt.Errorf("order[0][column]: column %q is not sortable", col.Data)
		}
		req.query.Sort = col.sort
		switch dir := form.Get("order[0][dir]"); dir {
		case "", "asc":
		case "desc":
			req.query.Sort.Desc = true
		default:
			return req, fmt.Errorf("order[0][dir]: must be asc or desc, got %q", task.Truncate(dir, 16))
		}
	}
	return req, nil
}

// formInt reads an optional integer form value in [lo, hi].
func formInt(form url.Values, name string, def, lo, hi int) (int, error) {
	v, ok := form[name]
	if !ok || v[0] == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v[0])
	if err != nil || n < lo || n > hi {
		return def, fmt.Errorf("%s: must be an integer from %d to %d", name, lo, hi)
	}
	return n, nil
}

// isControl reports whether r is a control character other than tab: no
// row text a person searches for holds one.
func isControl(r rune) bool {
	return r != '\t' && unicode.IsControl(r)
}
