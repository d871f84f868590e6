package webtable

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
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
	ColNumber   = "number"   // a whole number, edited in a number input
	ColZone     = "zone"     // an IANA zone, picked from the zone list
	ColDateTime = "datetime" // a wall time, edited in a datetime-local input
	ColTargets  = "targets"  // target ids, comma-separated, picked by name
	ColParams   = "params"   // task params, one key=value per line
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
	// Hidden is the column's default visibility: a page hides it until
	// the user shows it (the less used fields, so the table stays dense).
	Hidden bool `json:"hidden,omitempty"`

	sort store.RowSort // what ordering by this column asks of the store
}

// Columns derives a scenario's table columns from its field mapping: the
// id, title, body, schedule, channel, recipient and active fields (those the
// scenario maps), then the status: is_active (with error), next_fire,
// last_fire and last_status, then every other field the scenario maps
// (repeat, targets, … params) and its own fields its config names
// (param_fields), the less used ones hidden by default.
func Columns(sc *mapping.Scenario) []Column {
	var cols []Column
	seen := map[string]bool{}
	add := func(canon, typ string, orderable, hidden bool, options ...string) {
		f := sc.Field(canon)
		if f == "" || seen[f] {
			return
		}
		seen[f] = true
		cols = append(cols, fieldColumn(sc, f, cmp.Or(canon, f), typ, orderable, hidden, options))
	}
	add(mapping.FieldTaskID, ColID, true, false)
	add(mapping.FieldTitle, ColText, true, false)
	add(mapping.FieldTaskPara, ColText, false, false) // up to 64 KiB: not worth an index
	add(mapping.FieldCronPara, ColSchedule, true, false)
	add(mapping.FieldTaskType, ColEnum, true, false,
		string(task.ChannelEmail), string(task.ChannelSMS), string(task.ChannelOutbox))
	add(mapping.FieldTo, ColText, true, false)
	add(mapping.FieldActive, ColSwitch, true, false)
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
	for _, x := range extraFields() {
		add(x.canon, x.typ, false, x.hidden, x.options...)
	}
	for _, f := range sc.Config().ParamFields {
		if !seen[f] {
			seen[f] = true
			cols = append(cols, fieldColumn(sc, f, "", ColText, false, true, nil))
		}
	}
	return cols
}

// extraField is a canonical field shown after the status columns.
type extraField struct {
	canon, typ string
	hidden     bool
	options    []string
}

// extraFields are the canonical fields shown after the status columns,
// in order, with their column type; repeat and targets are shown by
// default, the others hidden until a user shows them.
func extraFields() []extraField {
	return []extraField{
		{mapping.FieldExecuteType, ColEnum, false, []string{string(task.Once), string(task.Periodic), "until_success"}},
		{mapping.FieldTargets, ColTargets, false, nil},
		{mapping.FieldTZ, ColZone, true, nil},
		{mapping.FieldStartTime, ColDateTime, true, nil},
		{mapping.FieldEndTime, ColDateTime, true, nil},
		{mapping.FieldTTL, ColNumber, true, nil},
		{mapping.FieldMaxRetries, ColNumber, true, nil},
		{mapping.FieldMisfire, ColEnum, true, []string{string(task.MisfireSkip), string(task.MisfireOnce), string(task.MisfireAll)}},
		{mapping.FieldOverlap, ColEnum, true, []string{string(task.OverlapAllow), string(task.OverlapSkip), string(task.OverlapQueue)}},
		{mapping.FieldParams, ColParams, true, nil},
		{mapping.FieldAlert, ColTargets, true, nil},
		{mapping.FieldAlertTo, ColText, true, nil},
		{mapping.FieldAlertAfter, ColNumber, true, nil},
		{mapping.FieldAlertAbsent, ColText, true, nil},
	}
}

// fieldColumn is the column of row field f; role is the canonical field
// it maps, or "" for a scenario's own field (its role is then the field).
func fieldColumn(sc *mapping.Scenario, f, role, typ string, orderable, hidden bool, options []string) Column {
	labels := sc.Labels(f)
	c := Column{Data: "fields." + f, Field: f, Role: cmp.Or(role, f), Title: cmp.Or(labels["en"], titleOf(f)), Labels: labels,
		Type: typ, Editable: typ != ColID, Orderable: orderable, Searchable: true, Options: options, Hidden: hidden,
		sort: store.RowSort{Field: f}}
	if typ == ColID {
		c.sort = store.RowSort{Column: store.SortID}
	}
	return c
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
	// Fields maps each canonical task field the scenario maps (targets,
	// alert, cron_para, …) to its row field, so a client can find a
	// row's target references (cronsheet apply checks them).
	Fields map[string]string `json:"fields"`
}

// serveColumns handles GET /api/v1/scenarios/:scenario/columns: the
// scenario's column model (columnsBody).
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
		body.Fields = map[string]string{}
		for _, canon := range mapping.CanonicalFields() {
			if f := sc.Field(canon); f != "" {
				body.Fields[canon] = f
			}
		}
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

// findColumn returns the column whose Data is data (ok false for none).
func findColumn(cols []Column, data string) (Column, bool) {
	for _, c := range cols {
		if c.Data == data {
			return c, true
		}
	}
	return Column{}, false
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
