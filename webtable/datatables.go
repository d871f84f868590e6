package webtable

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

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

// Bounds on a DataTables request.
const (
	maxTableColumns = 64
	maxTableStart   = 10_000_000
	maxDraw         = 1 << 31
)

// Column types the page knows how to show and edit.
const (
	ColID       = "id"       // the row id: shown, not editable
	ColText     = "text"     // free text
	ColSchedule = "schedule" // a schedule, previewed while typed
	ColEnum     = "enum"     // one of Options
	ColSwitch   = "switch"   // 1/0
	ColStatus   = "status"   // is_active, with error on hover
	ColTime     = "time"     // an instant, shown relative
)

// Column is one column of a scenario's table.
type Column struct {
	// Data is DataTables' columns[i].data: "fields.<row field>" or a
	// bookkeeping key of task.Row (is_active, next_fire, …).
	Data string `json:"data"`
	// Field is the row field a user edits, "" for bookkeeping columns.
	Field string `json:"field,omitempty"`
	// Role is what the column is, the same in every scenario: the
	// canonical task field it maps (title, cron_para, …) or the
	// bookkeeping key. The page translates a column's title by its role.
	Role  string `json:"role"`
	Title string `json:"title"`
	// Labels are the field's display labels by language tag (en, zh, …)
	// from the scenario's config (mapping.Config.Labels); a page shows
	// the one of its language, else its own title for Role, else Title.
	Labels     map[string]string `json:"labels,omitempty"`
	Type       string            `json:"type"`
	Editable   bool              `json:"editable"`
	Orderable  bool              `json:"orderable"`
	Searchable bool              `json:"searchable"`
	Options    []string          `json:"options,omitempty"`

	sort store.RowSort // what ordering by this column asks of the store
}

// TableDeps are the dependencies of the table endpoint.
type TableDeps struct {
	// Logger receives the 500s; nil discards them.
	Logger *slog.Logger
	// Store pages rows. Required: every driver serves the table.
	Store store.RowTable
	// Scenarios maps a scenario name to its field mapping.
	Scenarios map[string]*mapping.Scenario
}

// Table serves the DataTables endpoint and the column model.
type Table struct {
	httpapi.Base
	store     store.RowTable
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

// Columns derives a scenario's table columns from its field mapping: the
// id, title, body, schedule, channel, recipient and active fields (those the
// scenario maps), then the status: is_active (with error), next_fire,
// last_fire and last_status.
func Columns(sc *mapping.Scenario) []Column {
	var cols []Column
	add := func(canon, typ string, orderable bool, options ...string) {
		f := sc.Field(canon)
		if f == "" {
			return
		}
		labels := sc.Labels(f)
		c := Column{Data: "fields." + f, Field: f, Role: canon, Title: cmp.Or(labels["en"], titleOf(f)), Labels: labels,
			Type: typ, Editable: typ != ColID, Orderable: orderable, Searchable: true, Options: options,
			sort: store.RowSort{Field: f}}
		if typ == ColID {
			c.sort = store.RowSort{Column: store.SortID}
		}
		cols = append(cols, c)
	}
	add(mapping.FieldTaskID, ColID, true)
	add(mapping.FieldTitle, ColText, true)
	add(mapping.FieldTaskPara, ColText, false) // up to 64 KiB: not worth an index
	add(mapping.FieldCronPara, ColSchedule, true)
	add(mapping.FieldTaskType, ColEnum, true,
		string(task.ChannelEmail), string(task.ChannelSMS), string(task.ChannelOutbox))
	add(mapping.FieldTo, ColText, true)
	add(mapping.FieldActive, ColSwitch, true)
	status := func(data, title, typ string, sortCol string) {
		c := Column{Data: data, Role: data, Title: title, Type: typ}
		if sortCol != "" {
			c.Orderable, c.sort = true, store.RowSort{Column: sortCol}
		}
		cols = append(cols, c)
	}
	status("is_active", "Status", ColStatus, store.SortIsActive)
	status("next_fire", "Next fire", ColTime, store.SortNextFire)
	status("last_fire", "Last fire", ColTime, store.SortLastFire)
	status("last_status", "Last status", ColText, "")
	return cols
}

// titleOf turns a field name into a column title: memo_id → "Memo id"
// (标题 stays 标题).
func titleOf(field string) string {
	s := strings.ReplaceAll(field, "_", " ")
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// columnsBody is the answer of GET .../columns.
type columnsBody struct {
	Scenario string   `json:"scenario"`
	IDField  string   `json:"id_field"`
	Columns  []Column `json:"columns"`
	// PageMax is the largest page the table endpoint serves.
	PageMax int `json:"page_max"`
	// SearchMin is the fewest characters a search may have;
	// SearchMinCJK, when it holds Chinese, Japanese or Korean.
	SearchMin    int `json:"search_min"`
	SearchMinCJK int `json:"search_min_cjk"`
	// Defaults maps a row field to the value the scenario gives a row
	// that leaves it empty: a form adding rows starts from them.
	Defaults map[string]any `json:"defaults"`
	// TZ is the scenario's default zone (an IANA name; "UTC" when its
	// config names none).
	TZ string `json:"tz"`
	// TZField is the row field holding a row's own zone ("" when the
	// scenario maps none): a row's times are shown in that zone.
	TZField string `json:"tz_field,omitempty"`
	// Scenarios names every scenario the node serves (memos first, then
	// by name), so a page can offer the others' tables.
	Scenarios []string `json:"scenarios"`
}

func (t *Table) serveColumns(c *gin.Context) {
	name := c.Param("scenario")
	cols, ok := t.columns[name]
	if !ok {
		c.AbortWithStatusJSON(http.StatusNotFound, httpapi.ErrorBody{Error: httpapi.UnknownScenario(name).Error()})
		return
	}
	idField := ""
	for _, col := range cols {
		if col.Type == ColID {
			idField = col.Field
		}
	}
	body := columnsBody{Scenario: name, IDField: idField, Columns: cols,
		PageMax: store.MaxRowPage, SearchMin: store.MinRowSearch, SearchMinCJK: store.MinRowSearchCJK, Defaults: map[string]any{}, TZ: "UTC",
		Scenarios: t.scenarioNames()}
	if sc := t.scenarios[name]; sc != nil {
		if d := sc.Config().Defaults; d != nil {
			body.Defaults = d
		}
		body.TZ = sc.Location().String()
		body.TZField = sc.Field(mapping.FieldTZ)
	}
	c.JSON(http.StatusOK, body)
}

// scenarioNames are the scenarios with a table: memos first (the shipped
// one, the page's default), then the others by name.
func (t *Table) scenarioNames() []string {
	names := slices.Sorted(maps.Keys(t.columns))
	if i := slices.Index(names, "memos"); i > 0 {
		names = slices.Insert(slices.Delete(names, i, i+1), 0, "memos")
	}
	return names
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

// tableCounts counts the scenario's rows each filter chip keeps (without
// the search): invalid, switched off, due within the hour, and by channel.
type tableCounts struct {
	Errors   int64            `json:"errors"`
	Off      int64            `json:"off"`
	Due      int64            `json:"due"`
	Channels map[string]int64 `json:"channels"`
}

// dueWithin is how far ahead the "due" filter looks.
const dueWithin = time.Hour

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
}

// outcomesPerRow is how many recent outcomes a table row carries.
const outcomesPerRow = 10

// addOutcomes reads the page's rows' recent outcomes when the store keeps
// them (store.RunStats; every driver does).
func (t *Table) addOutcomes(ctx context.Context, rows []tableRow) error {
	rs, ok := t.store.(store.RunStats)
	if !ok {
		return nil
	}
	var ids []string
	for _, r := range rows {
		if r.Task != nil {
			ids = append(ids, r.Task.TaskID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	out, err := rs.RecentOutcomes(ctx, ids, outcomesPerRow)
	if err != nil {
		return fmt.Errorf("recent outcomes of the page: %w", err)
	}
	for i := range rows {
		if rows[i].Task != nil {
			rows[i].Outcomes = out[rows[i].Task.TaskID]
		}
	}
	return nil
}

// tableRows pairs a page's rows with their tasks.
func tableRows(page *store.RowPage) []tableRow {
	out := make([]tableRow, len(page.Rows))
	for i, r := range page.Rows {
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

// tableRequest is a parsed, validated DataTables request.
type tableRequest struct {
	draw  int
	query store.RowQuery
}

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
	if err != nil {
		fail(err)
		return
	}
	answer := tableAnswer{Draw: req.draw, RecordsTotal: page.Total,
		RecordsFiltered: page.Filtered, CountsCapped: page.Capped, Data: tableRows(page)}
	if err := t.addOutcomes(c.Request.Context(), answer.Data); err != nil {
		fail(err)
		return
	}
	if c.Request.Form.Get("counts") == "1" {
		if answer.Counts, err = t.counts(c.Request.Context(), name, cols, now); err != nil {
			fail(err)
			return
		}
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

// channelColumn is the scenario's channel column (ok false without one).
func channelColumn(cols []Column) (Column, bool) {
	for _, c := range cols {
		if c.Role == mapping.FieldTaskType && c.Field != "" {
			return c, true
		}
	}
	return Column{}, false
}

// channelFilter keeps the rows of one channel; the scenario's default
// channel (else the built-in outbox) also keeps the rows that name none.
func (t *Table) channelFilter(scenario string, col Column, ch string) store.RowFilter {
	def := string(task.ChannelOutbox)
	if sc := t.scenarios[scenario]; sc != nil {
		if v, ok := sc.Config().Defaults[col.Field].(string); ok && v != "" {
			def = v
		}
	}
	return store.RowFilter{Field: col.Field, Value: ch, OrMissing: ch == def}
}

// filterOf reads the filter chips of a table request: filter[state]
// (error, off or due: due within the hour) and filter[channel].
func (t *Table) filterOf(scenario string, cols []Column, form url.Values, now time.Time) (store.RowFilter, error) {
	var f store.RowFilter
	switch st := form.Get("filter[state]"); st {
	case "":
	case store.RowStateError, store.RowStateOff:
		f.State = st
	case "due":
		f.DueBy = now.Add(dueWithin)
	default:
		return f, fmt.Errorf("filter[state]: must be error, off or due, got %q", task.Truncate(st, 16))
	}
	if ch := form.Get("filter[channel]"); ch != "" {
		col, ok := channelColumn(cols)
		if !ok || !slices.Contains(col.Options, ch) {
			return f, fmt.Errorf("filter[channel]: %q is not a channel of this table", task.Truncate(ch, 16))
		}
		cf := t.channelFilter(scenario, col, ch)
		f.Field, f.Value, f.OrMissing = cf.Field, cf.Value, cf.OrMissing
	}
	return f, nil
}

// counts counts what each filter chip keeps: one count query each, served
// by the store's indexes.
func (t *Table) counts(ctx context.Context, scenario string, cols []Column, now time.Time) (*tableCounts, error) {
	n := func(f store.RowFilter) (int64, error) {
		p, err := t.store.QueryRows(ctx, store.RowQuery{Scenario: scenario, Limit: 1, Filter: f})
		if err != nil {
			return 0, err
		}
		return p.Filtered, nil
	}
	out := &tableCounts{Channels: map[string]int64{}}
	var err error
	if out.Errors, err = n(store.RowFilter{State: store.RowStateError}); err != nil {
		return nil, err
	}
	if out.Off, err = n(store.RowFilter{State: store.RowStateOff}); err != nil {
		return nil, err
	}
	if out.Due, err = n(store.RowFilter{DueBy: now.Add(dueWithin)}); err != nil {
		return nil, err
	}
	if col, ok := channelColumn(cols); ok {
		for _, ch := range col.Options {
			if out.Channels[ch], err = n(t.channelFilter(scenario, col, ch)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
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

func findColumn(cols []Column, data string) (Column, bool) {
	for _, c := range cols {
		if c.Data == data {
			return c, true
		}
	}
	return Column{}, false
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
