package webtable

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// The web table's server-side processing endpoint, speaking DataTables'
// protocol (https://datatables.net/manual/server-side):
//
//	GET|POST /api/v1/scenarios/:scenario/table
//	  draw, start, length, search[value], order[0][column], order[0][dir],
//	  columns[i][data]
//	→ {draw, recordsTotal, recordsFiltered, data} or {draw, error} (4xx/5xx)
//
// An answer carries ETag, the page's tag (pageTag), and Server-Timing: a
// GET sent again with If-None-Match: <tag> is answered 304 Not Modified,
// without the rows, while nothing the page shows has changed (the page's
// poll).
//
// and the column model the page builds the table from:
//
//	GET /api/v1/scenarios/:scenario/columns → {scenario, columns: [...]}
//
// Search and sort go to store.RowTable, which serves them from indexes.

// TableDeps are the dependencies of the table endpoint.
type TableDeps struct {
	// Logger receives the 500s; nil discards them.
	Logger *slog.Logger
	// Store pages rows and reads their recent outcomes. Required: every
	// driver serves the table.
	Store TableStore
	// Scenarios maps a scenario name to its field mapping.
	Scenarios map[string]*mapping.Scenario
}

// TableStore is what the table reads: the rows with their tasks, and each
// task's recent outcomes.
type TableStore interface {
	store.RowTable
	store.RunStats
}

// Table serves the DataTables endpoint and the column model.
type Table struct {
	httpapi.Base
	store     TableStore
	columns   map[string][]Column          // by scenario
	scenarios map[string]*mapping.Scenario // by name: defaults and zone
}

// NewTable returns the table endpoint over d. It panics when d.Store is
// nil, a wiring bug.
func NewTable(d TableDeps) *Table {
	t := &Table{Base: httpapi.NewBase("webtable", d.Logger, nil, nil),
		store:   httpapi.Require("webtable", "TableDeps.Store", d.Store),
		columns: map[string][]Column{}, scenarios: map[string]*mapping.Scenario{}}
	for name, sc := range d.Scenarios {
		if sc != nil {
			t.columns[name] = Columns(sc)
			t.scenarios[name] = sc
		}
	}
	return t
}

// Prepare asks the store for the indexes each scenario's table sorts and
// searches by (store.RowTable.PrepareRowTable). Call it once at start.
func (t *Table) Prepare(ctx context.Context) error {
	for _, name := range slices.Sorted(maps.Keys(t.columns)) {
		var fields []string
		for _, c := range t.columns[name] {
			if c.Orderable && c.sort.Field != "" {
				fields = append(fields, c.sort.Field)
			}
		}
		if err := t.store.PrepareRowTable(ctx, name, fields); err != nil {
			return err
		}
	}
	return nil
}

// Register mounts the table routes on r.
func (t *Table) Register(r gin.IRouter) {
	g := r.Group("/api/v1/scenarios/:scenario")
	g.GET("/table", t.serve)
	g.POST("/table", t.serve)
	g.GET("/columns", t.serveColumns)
	g.GET("/table.csv", t.exportCSV)
}

// tableAnswer is the DataTables answer.
type tableAnswer struct {
	Draw            int   `json:"draw"`
	RecordsTotal    int64 `json:"recordsTotal"`
	RecordsFiltered int64 `json:"recordsFiltered"`
	// CountsCapped says the store stopped counting at its cap: the two
	// counts are lower bounds (store.RowPage.Capped).
	CountsCapped bool       `json:"countsCapped,omitempty"`
	Data         []tableRow `json:"data"`
	// Counts are the filter chips' counts, sent when the request asks
	// (counts=1).
	Counts *tableCounts `json:"counts,omitempty"`
}

// tableRow is a row as the table shows it: the row and, beside it, the
// state of its task (none before the row was first synced), so a page is
// one request, not one more per row.
type tableRow struct {
	*task.Row
	Task *store.RowTask `json:"task,omitempty"`
	// Outcomes are the task's newest finished runs (at most
	// outcomesPerRow, newest first), read for the whole page in one store
	// call: the row's strip of recent outcomes.
	Outcomes []store.Outcome `json:"outcomes,omitempty"`
	// State is "failing" when the row's newest finished run (scheduled or
	// manual: the last_status the scheduler mirrors onto the row) ended
	// dead, timed out or rejected (store.Failing), else empty; the next
	// run that ends otherwise, a success, clears it. It is derived from
	// the runs and filtered by store.RowStateFailing from the same
	// column, so the chip and the rows agree; is_active stays as the
	// user set it.
	State string `json:"state,omitempty"`
	// LastError is a failing row's newest failed run's error, shown
	// inline under its state.
	LastError string `json:"last_error,omitempty"`
}

// outcomesPerRow is how many recent outcomes a table row carries.
const outcomesPerRow = 10

// addOutcomes reads the page's rows' recent outcomes.
func (t *Table) addOutcomes(ctx context.Context, rows []tableRow) error {
	var ids []string
	for _, r := range rows {
		if r.Task != nil {
			ids = append(ids, r.Task.TaskID)
		}
	}
	if len(ids) == 0 {
		for i := range rows {
			markFailing(&rows[i])
		}
		return nil
	}
	out, err := t.store.RecentOutcomes(ctx, ids, outcomesPerRow)
	if err != nil {
		return fmt.Errorf("recent outcomes of the page: %w", err)
	}
	for i := range rows {
		if rows[i].Task != nil {
			rows[i].Outcomes = out[rows[i].Task.TaskID]
		}
		markFailing(&rows[i])
	}
	return nil
}

// markFailing sets r's State and LastError when its last status is a
// failure: the error is the newest failed outcome's.
func markFailing(r *tableRow) {
	if r.Row == nil || !store.Failing(r.LastStatus) {
		return
	}
	r.State = store.RowStateFailing
	for _, o := range r.Outcomes {
		if store.Failing(string(o.State)) {
			r.LastError = o.Error
			break
		}
	}
}

// tableRows pairs a page's rows of scenario sc (nil: not known) with
// their tasks; a row that does not fire shows no next fire.
func tableRows(sc *mapping.Scenario, page *store.RowPage) []tableRow {
	out := make([]tableRow, len(page.Rows))
	for i, r := range page.Rows {
		hideIdleNextFire(sc, r, page.Tasks[r.ID])
		out[i] = tableRow{Row: r, Task: page.Tasks[r.ID]}
	}
	return out
}

// tableError is the DataTables answer to a request that failed: its draw
// and error (what DataTables reads), with the stable code and the field
// of every other error body.
type tableError struct {
	Draw  int       `json:"draw"`
	Error string    `json:"error"`
	Code  task.Code `json:"code"`
	Field string    `json:"field,omitempty"`
}

// tableErr is the tableError of err, answered with status (a 4xx), for
// draw.
func tableErr(draw, status int, err error) tableError {
	te := tableError{Draw: draw, Error: err.Error(), Code: task.CodeOf(err)}
	if te.Code == "" {
		te.Code = task.StatusCode(status)
	}
	var ve *task.ValidationError
	if errors.As(err, &ve) {
		te.Field = ve.Field
	}
	return te
}

// serve handles GET|POST /api/v1/scenarios/:scenario/table: a page of
// rows as DataTables asks for it (the protocol above).
func (t *Table) serve(c *gin.Context) {
	began := time.Now()
	name := c.Param("scenario")
	cols, ok := t.columns[name]
	if !ok {
		c.AbortWithStatusJSON(http.StatusNotFound, tableErr(0, http.StatusNotFound, httpapi.UnknownScenario(name)))
		return
	}
	if err := httpapi.LimitBody(c, httpapi.MaxBodyBytes); err != nil {
		c.AbortWithStatusJSON(http.StatusRequestEntityTooLarge, tableErr(0, http.StatusRequestEntityTooLarge, err))
		return
	}
	if err := c.Request.ParseForm(); err != nil {
		c.AbortWithStatusJSON(http.StatusBadRequest, tableErr(0, http.StatusBadRequest, fmt.Errorf("cannot read the request: %w", err)))
		return
	}
	req, err := parseTableRequest(c.Request.Form, cols)
	if err != nil {
		c.AbortWithStatusJSON(http.StatusBadRequest, tableErr(req.draw, http.StatusBadRequest, err))
		return
	}
	req.query.Scenario, req.query.WithTasks = name, true
	now := time.Now()
	if req.query.Filter, err = t.filterOf(name, cols, c.Request.Form, now); err != nil {
		c.AbortWithStatusJSON(http.StatusBadRequest, tableErr(req.draw, http.StatusBadRequest, err))
		return
	}
	fail := func(err error) {
		status, body := httpapi.Classify(err)
		if status >= http.StatusInternalServerError && !errors.Is(c.Request.Context().Err(), context.Canceled) {
			t.Logger().ErrorContext(c.Request.Context(), "table query failed", "scenario", name, "error", err)
		}
		c.AbortWithStatusJSON(status, tableError{Draw: req.draw, Error: body.Error, Code: body.Code, Field: body.Field})
	}
	page, err := t.store.QueryRows(c.Request.Context(), req.query)
	var counts *tableCounts
	if err == nil && c.Request.Form.Get("counts") == "1" {
		page, counts, err = t.pageWithCounts(c.Request.Context(), req.query, page, cols, now)
	}
	if err != nil {
		fail(err)
		return
	}
	answer := tableAnswer{Draw: req.draw, RecordsTotal: page.Total, RecordsFiltered: page.Filtered,
		CountsCapped: page.Capped, Data: tableRows(t.scenarios[name], page), Counts: counts}
	if err := t.addOutcomes(c.Request.Context(), answer.Data); err != nil {
		fail(err)
		return
	}
	writeAnswer(c, answer, began)
}

// writeAnswer answers a table request with answer, tagged with its page
// tag (pageTag) as a weak ETag: a GET whose If-None-Match holds the tag
// is answered 304 Not Modified, without the rows. Every answer says how
// long the server took (Server-Timing: app;dur=<ms>), so the page can
// poll a costly search less often.
func writeAnswer(c *gin.Context, answer tableAnswer, began time.Time) {
	tag, err := pageTag(answer)
	if err != nil {
		// A page that cannot be encoded cannot be sent either: the same
		// error follows from c.JSON, answered as gin answers it.
		c.JSON(http.StatusOK, answer)
		return
	}
	h := c.Writer.Header()
	h.Set("ETag", tag)
	h.Set("Cache-Control", "no-cache")
	h.Set("Server-Timing", fmt.Sprintf("app;dur=%.1f", float64(time.Since(began).Microseconds())/1000))
	if c.Request.Method == http.MethodGet && etagMatch(c.GetHeader("If-None-Match"), tag) {
		c.Status(http.StatusNotModified)
		return
	}
	c.JSON(http.StatusOK, answer)
}

// pageTag is a table answer's tag: a weak ETag over everything the answer
// holds but its draw counter (the rows with their fields, versions and
// bookkeeping, their tasks' states, their outcome strips, the counts and
// the chips' counts). Two answers with the same tag show the same page.
// It is a hash of what was read rather than a version kept by the store,
// so both drivers answer it from the page's own reads, and no write path
// (sync, a fire, a finished run, a task's state) has to bump a shared
// counter.
func pageTag(answer tableAnswer) (string, error) {
	answer.Draw = 0
	b, err := json.Marshal(answer)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return `W/"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`, nil
}

// etagMatch reports whether an If-None-Match header holds tag, compared
// weakly (RFC 9110 13.1.2): "*" or any listed tag with the same opaque
// part.
func etagMatch(header, tag string) bool {
	want := strings.TrimPrefix(tag, "W/")
	for part := range strings.SplitSeq(header, ",") {
		part = strings.TrimSpace(part)
		if part == "*" || strings.TrimPrefix(part, "W/") == want {
			return true
		}
	}
	return false
}
