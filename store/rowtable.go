package store

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"cronsheet/task"
)

// RowTable is what the web table needs from storage: one page of a
// scenario's rows, sorted by one column and filtered by a text search, with
// the counts DataTables shows. It is separate from Store so that a driver can
// offer it (or not) without changing Store; store/storetest.RunRowTable is
// its conformance suite.
//
// Every query must be served by indexes: a page never reads every row of a
// scenario (deep pages may walk an index, not the table). PrepareRowTable
// creates what a scenario's sortable fields need; sorting by a field that was
// not prepared is task.ErrInvalid rather than a full scan.
type RowTable interface {
	// PrepareRowTable makes the scenario's rows searchable and the given row
	// fields sortable (creating indexes when missing; idempotent, safe to
	// call at every start and from several processes). Field names must
	// pass ValidSortField, else task.ErrInvalid.
	PrepareRowTable(ctx context.Context, scenario string, sortFields []string) error
	// QueryRows returns one page of q.Scenario's rows.
	QueryRows(ctx context.Context, q RowQuery) (*RowPage, error)
}

// sortFieldRE is the shape of a sortable field name: mapping's row field
// rule (mapping.ValidFieldName; the two must agree). Drivers splice the
// name into a JSON path or a key path and name an index after its hex, so
// nothing but letters, marks, digits and _ may get through.
var sortFieldRE = regexp.MustCompile(`^[\p{L}_][\p{L}\p{Mn}\p{Mc}\p{Nd}_]*$`)

// ValidSortField reports whether name may be a sortable row field: 1..64
// bytes of valid UTF-8, letters of any script, marks, digits and _, not
// starting with a digit or a mark (title, 标题).
func ValidSortField(name string) bool {
	return len(name) <= 64 && utf8.ValidString(name) && sortFieldRE.MatchString(name)
}

// Row columns a RowQuery may sort by besides prepared fields.
const (
	SortID       = "id"
	SortIsActive = "is_active"
	SortNextFire = "next_fire"
	SortLastFire = "last_fire"
)

// RowSortColumns lists the bookkeeping columns every driver sorts by.
func RowSortColumns() []string {
	return []string{SortID, SortIsActive, SortNextFire, SortLastFire}
}

// MaxRowSearch bounds RowQuery.Search, in bytes.
const MaxRowSearch = 256

// MinRowSearch is the fewest characters (runes) a non-empty search may have:
// substring search is served by a trigram index.
const MinRowSearch = 3

// MinRowSearchCJK is the fewest characters a search holding Chinese,
// Japanese or Korean may have: two of those are a word (周报, 值班). Such a
// short search has no trigram, so the drivers match it as a substring of
// the scenario's rows' search text instead of through the trigram index.
const MinRowSearchCJK = 1

// SearchMin is the fewest characters search may have: MinRowSearchCJK when
// it holds a Han, Hiragana, Katakana or Hangul character, else
// MinRowSearch.
func SearchMin(search string) int {
	for _, r := range search {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			return MinRowSearchCJK
		}
	}
	return MinRowSearch
}

// ShortSearch reports whether a valid, non-empty search is too short for
// the trigram index (fewer than three runes).
func ShortSearch(search string) bool {
	return utf8.RuneCountInString(strings.TrimSpace(search)) < 3
}

// MaxRowPage bounds RowQuery.Limit.
const MaxRowPage = 500

// RowQuery selects one page of rows.
type RowQuery struct {
	Scenario string
	// Search keeps rows one of whose field values or whose error contains
	// it, ignoring letter case; "" keeps every row. Otherwise it must have
	// SearchMin(Search) characters to MaxRowSearch bytes, else
	// task.ErrInvalid.
	Search string
	// Sort orders the rows; the zero value is id order. Ties are broken in
	// a fixed order, so pages never overlap.
	Sort RowSort
	// Offset skips that many rows; Limit (1..MaxRowPage) is the page size.
	Offset, Limit int
	// WithTasks asks for RowPage.Tasks (the table shows them; an export
	// does not need them and saves the read).
	WithTasks bool
	// Filter keeps only rows of one kind (with the search: both);
	// RowPage.Filtered counts what it and the search keep.
	Filter RowFilter
}

// Row states a RowFilter may keep.
const (
	RowStateError = "error" // is_active -1: the row is invalid
	RowStateOff   = "off"   // is_active 0: switched off
	// RowStateFailing keeps rows whose newest finished run (scheduled or
	// manual, the last_status the scheduler mirrors onto the row) ended
	// in one of FailingStatuses(); the next run that ends otherwise clears
	// it. It is derived from runs: is_active stays as the user set it.
	RowStateFailing = "failing"
)

// FailingStatuses are the last statuses of a failing row (RowStateFailing):
// the final run states that delivered nothing.
func FailingStatuses() []string {
	return []string{string(task.RunDead), string(task.RunTimeout), string(task.RunRejected)}
}

// Failing reports whether a row's last status makes it failing.
func Failing(lastStatus string) bool { return slices.Contains(FailingStatuses(), lastStatus) }

// RowFilter narrows a RowQuery; the zero value keeps every row.
type RowFilter struct {
	// State keeps rows in that state: RowStateError, RowStateOff,
	// RowStateFailing or "".
	State string
	// DueBy, when not zero, keeps active rows (is_active 1) whose next
	// fire is set and at or before it.
	DueBy time.Time
	// Field, when set, keeps rows whose field equals Value (a string);
	// OrMissing also keeps rows that leave the field empty or out (their
	// default is Value). Field follows the rule of sortable fields.
	Field, Value string
	OrMissing    bool
}

// IsZero reports whether f keeps every row.
func (f RowFilter) IsZero() bool { return f == RowFilter{} }

// RowSort is one sort key: a row field prepared by PrepareRowTable, or one
// of RowSortColumns. Exactly one of Field and Column may be set.
type RowSort struct {
	Field  string
	Column string
	Desc   bool
}

// RowPage is the answer of RowTable.QueryRows.
type RowPage struct {
	// Total counts the scenario's rows; Filtered those matching the search.
	Total, Filtered int64
	// Capped says the driver stopped counting at its cap: Total and
	// Filtered are then lower bounds (store/mongo counts up to
	// Config.RowCountCap; the SQLite driver's counts are always exact).
	Capped bool
	Rows   []*task.Row
	// Tasks holds, by row id, the live (not deleted) task of each row of
	// the page that has one, read with the page through the row-task
	// index, so the table needs no request per row to show a row's state.
	// A row not synced yet has none. Nil unless RowQuery.WithTasks.
	Tasks map[string]*RowTask
}

// RowTask is what the table shows of a row's task beside the row.
type RowTask struct {
	TaskID string     `json:"task_id"`
	State  task.State `json:"state"`
	// Enabled is the task's is_enable: a disabled task (its row switched
	// off or in error) never fires, not even by hand.
	Enabled bool `json:"enabled"`
	// Done is the task's is_done: it has no slot left to fire.
	Done bool `json:"done"`
}
