package webtable

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// maxExportRows bounds one CSV export. An export is the one request that
// may read many rows (it pages through the view 500 at a time).
const maxExportRows = 100_000

// exportCSV handles GET /api/v1/scenarios/:scenario/table.csv with the
// table's parameters (search, order): the rows of the view, every page of
// it up to maxExportRows rows, as a full backup that the import reads back
// as the same rows. The file is UTF-8 with a byte order mark. The header
// names every field the scenario maps (in mapping order), then every
// other field a row of the export holds (sorted), then the status columns
// (exportStatus), which an import reads over; cells are written as
// csvCell says. The columns parameters only order the rows; start and
// length are ignored. The rows are read into a temporary file first, as
// the header depends on all of them.
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
	q := req.query
	q.Scenario, q.Offset, q.Limit = name, 0, store.MaxRowPage
	ctx := c.Request.Context()
	spool, err := os.CreateTemp("", "cronsheet-export-*.jsonl")
	if err != nil {
		c.AbortWithStatusJSON(http.StatusInternalServerError, httpapi.ErrorBody{Error: "cannot write a temporary file for the export"})
		return
	}
	defer func() {
		_ = spool.Close()
		_ = os.Remove(spool.Name())
	}()
	extras, err := t.spoolExport(ctx, q, spool)
	if err != nil {
		status, body := httpapi.Classify(err)
		c.AbortWithStatusJSON(status, body)
		return
	}
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s.csv"`, name, time.Now().UTC().Format("20060102-150405")))
	if err := writeExport(c.Writer, spool, exportFields(t.scenarios[name], extras)); err != nil &&
		!errors.Is(err, context.Canceled) {
		t.Logger().ErrorContext(ctx, "csv export failed midway", "scenario", name, "error", err)
	}
}

// exportStatus are the status columns an export writes after the fields;
// the service computes them, and an import reads over them
// (exportStatusColumn).
var exportStatus = [...]string{"is_active", "next_fire", "last_fire", "last_status", "error"}

// exportRow is one row of an export as spooled: its fields and its status
// cells (exportStatus).
type exportRow struct {
	Fields map[string]any `json:"f"`
	Status []string       `json:"s"`
}

// spoolExport writes the rows of q, page by page up to maxExportRows, to
// spool as JSON lines (exportRow) and returns the names of the fields
// they hold.
func (t *Table) spoolExport(ctx context.Context, q store.RowQuery, spool io.Writer) (map[string]bool, error) {
	names := map[string]bool{}
	bw := bufio.NewWriter(spool)
	enc := json.NewEncoder(bw)
	sc := t.scenarios[q.Scenario]
	for written := 0; ; q.Offset += q.Limit {
		page, err := t.store.QueryRows(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, row := range page.Rows {
			hideIdleNextFire(sc, row, page.Tasks[row.ID])
			er := exportRow{Fields: row.Fields, Status: make([]string, len(exportStatus))}
			for i, col := range exportStatus {
				er.Status[i] = cellText(row, Column{Data: col})
			}
			for k := range row.Fields {
				names[k] = true
			}
			if err := enc.Encode(er); err != nil {
				return nil, fmt.Errorf("spool the export: %w", err)
			}
			written++
		}
		if len(page.Rows) < q.Limit || written >= maxExportRows {
			break
		}
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("spool the export: %w", err)
	}
	return names, nil
}

// exportFields is an export's field columns: every field sc maps, in
// the order of mapping.CanonicalFields, then the other names of held,
// sorted.
func exportFields(sc *mapping.Scenario, held map[string]bool) []string {
	var out []string
	mapped := map[string]bool{}
	for _, canon := range mapping.CanonicalFields() {
		if f := sc.Field(canon); f != "" && !mapped[f] {
			out = append(out, f)
			mapped[f] = true
		}
	}
	var extras []string
	for k := range held {
		if !mapped[k] {
			extras = append(extras, k)
		}
	}
	slices.Sort(extras)
	return append(out, extras...)
}

// writeExport writes the CSV of the rows spooled in spool: a UTF-8 byte
// order mark, the header (fields, then exportStatus) and one line per row.
func writeExport(out io.Writer, spool *os.File, fields []string) error {
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("read the spooled export: %w", err)
	}
	// A byte order mark first: spreadsheets then read the file as UTF-8
	// (Chinese text included); the import drops it.
	if _, err := io.WriteString(out, "\uFEFF"); err != nil {
		return err
	}
	w := csv.NewWriter(out)
	if err := w.Write(append(slices.Clone(fields), exportStatus[:]...)); err != nil {
		return err
	}
	dec := json.NewDecoder(bufio.NewReader(spool))
	dec.UseNumber()
	rec := make([]string, len(fields)+len(exportStatus))
	for {
		var er exportRow
		if err := dec.Decode(&er); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("read the spooled export: %w", err)
		}
		for i, f := range fields {
			rec[i] = ""
			if v, ok := er.Fields[f]; ok {
				rec[i] = csvCell(v)
			}
		}
		for i, s := range er.Status {
			rec[len(fields)+i] = csvSafe(s)
		}
		if err := w.Write(rec); err != nil {
			return err // the client went away
		}
	}
	w.Flush()
	return w.Error()
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
