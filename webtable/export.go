package webtable

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/store"
	"cronsheet/task"
)

// maxExportRows bounds one CSV export. An export is the one request that
// may read many rows (it pages through the view 500 at a time).
const maxExportRows = 100_000

// exportCSV handles GET /api/v1/scenarios/:scenario/table.csv with the
// table's parameters (search, order, columns): the current view, every
// page of it up to maxExportRows rows, as CSV with a header of the
// columns' data keys. start and length are ignored.
func (t *Table) exportCSV(c *gin.Context) {
	name := c.Param("scenario")
	cols, ok := t.columns[name]
	if !ok {
		c.AbortWithStatusJSON(http.StatusNotFound, httpapi.StatusBody(http.StatusNotFound, httpapi.UnknownScenario(name).Error()))
		return
	}
	form := c.Request.URL.Query()
	form.Del("start")
	form.Del("length")
	req, err := parseTableRequest(form, cols)
	if err != nil {
		c.AbortWithStatusJSON(http.StatusBadRequest, httpapi.StatusBody(http.StatusBadRequest, err.Error()))
		return
	}
	if req.query.Filter, err = t.filterOf(name, cols, form, time.Now()); err != nil {
		c.AbortWithStatusJSON(http.StatusBadRequest, httpapi.ErrorBody{Error: err.Error()})
		return
	}
	sent := sentColumns(form, cols)
	q := req.query
	q.Scenario, q.Offset, q.Limit = name, 0, store.MaxRowPage
	ctx := c.Request.Context()
	page, err := t.store.QueryRows(ctx, q)
	if err != nil {
		status, body := httpapi.Classify(err)
		c.AbortWithStatusJSON(status, body)
		return
	}
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s.csv"`, name, time.Now().UTC().Format("20060102-150405")))
	w := csv.NewWriter(c.Writer)
	header := make([]string, len(sent))
	for i, col := range sent {
		header[i] = strings.TrimPrefix(col.Data, "fields.")
	}
	_ = w.Write(header)
	written := 0
	for {
		for _, row := range page.Rows {
			rec := make([]string, len(sent))
			for i, col := range sent {
				rec[i] = csvSafe(cellText(row, col))
			}
			if err := w.Write(rec); err != nil {
				return // the client went away
			}
			written++
		}
		if len(page.Rows) < q.Limit || written >= maxExportRows {
			break
		}
		q.Offset += q.Limit
		if page, err = t.store.QueryRows(ctx, q); err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Logger().ErrorContext(ctx, "csv export failed midway", "scenario", name, "error", err)
			}
			break // the status is sent; a cut file is all we can do
		}
	}
	w.Flush()
}

// sentColumns is the columns the request names, in its order, or every
// column when it names none. parseTableRequest has checked them.
func sentColumns(form map[string][]string, cols []Column) []Column {
	var out []Column
	for i := 0; i < maxTableColumns; i++ {
		v, ok := form[fmt.Sprintf("columns[%d][data]", i)]
		if !ok {
			break
		}
		if col, found := findColumn(cols, v[0]); found {
			out = append(out, col)
		}
	}
	if len(out) == 0 {
		return cols
	}
	return out
}

// cellText is a row's value in a column as plain text.
func cellText(row *task.Row, col Column) string {
	switch col.Data {
	case "is_active":
		return fmt.Sprint(row.IsActive)
	case "next_fire":
		return timeText(row.NextFire)
	case "last_fire":
		return timeText(row.LastFire)
	case "last_status":
		return row.LastStatus
	case "error":
		return row.Error
	}
	v, ok := row.Fields[col.Field]
	if !ok || v == nil {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	}
	return fmt.Sprint(v)
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// csvGuarded are the first characters that make a spreadsheet read a cell
// as a formula.
const csvGuarded = "=+-@\t\r"

// csvSafe defuses spreadsheet formulas: a cell starting with = + - @ or a
// tab/CR gets a leading apostrophe (OWASP's CSV injection advice). A cell
// starting with an apostrophe gets one more, so that the import, which
// drops one apostrophe before either (csvUnguard), reads back every cell
// exactly as it was.
func csvSafe(s string) string {
	if s != "" && strings.IndexByte(csvGuarded+"'", s[0]) >= 0 {
		return "'" + s
	}
	return s
}
