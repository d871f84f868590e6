package mongo

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"cronsheet/store"
	"cronsheet/task"
)

// The web table (store.RowTable) on MongoDB.
//
//   - Search: every row keeps, next to its fields, the search keys the
//     writes compute (InsertRow, UpdateRowFields, ApplySync's error,
//     RestoreRow): st, its field values lower-cased; sg, the distinct
//     trigrams (three runes, so Chinese, Japanese and Korean text works
//     like any other) of those values; and eg, the trigrams of its error,
//     lower-cased. A search is the filter $or of
//     {scenario, sg: {$all: its trigrams}, st: {$regex: the text}} and the
//     same on eg and error: the multikey indexes ix_rows_search
//     (scenario, sg) and ix_rows_esearch (scenario, eg) find the candidates,
//     and the regex, run on those only, removes trigrams that occur apart.
//     No regex runs over the scenario, but for a search of one or two
//     Chinese, Japanese or Korean characters (store.SearchMin): it has no
//     trigram, and the regex alone reads the scenario's rows.
//   - Filters (store.RowFilter): is_active and next_fire conditions on
//     their (scenario, col, _id) indexes, failing's on (scenario,
//     last_status), a field's on its sort index.
//   - Sort: ix_rows_f_<hex of the field> (scenario, fields.<f>, _id) per
//     sortable field, made by PrepareRowTable, and (scenario, col, _id) for
//     is_active, next_fire and last_fire (created with the other indexes
//     in Open); id order is the unique (scenario, id) index. _id (an
//     ObjectID, made in insertion order) breaks ties, so pages never
//     overlap. MongoDB orders values by type, then value: numbers before
//     strings, and strings by byte (case-sensitive; the SQLite driver
//     ignores ASCII case). Collations would fix that but FerretDB v1 has
//     none.
//   - Paging: skip + limit over the sort index: a deep page walks index
//     keys, never documents it does not return.
//   - Next fire order: rows with a next fire (next_fire > 0) soonest
//     first, then the idle ones (next_fire 0: switched off, invalid, done,
//     not armed yet) in _id order; descending is the exact reverse (like
//     PostgreSQL's NULLS LAST). MongoDB cannot index the expression
//     "next_fire = 0", so a page is read as two ranges of
//     ix_rows_next_fire (rowtable_nextfire.go): skip/limit over the first,
//     the rest of the page from the start of the second; only a page
//     wholly past the first range counts it (up to the offset). A stored
//     sort key would do it in one read but must be kept by every write of
//     next_fire (rows, restore, sync, the fire mirror) and filled in old
//     documents; the two reads keep next_fire the only copy.
//   - Counts: countDocuments on the same indexes (a COUNT_SCAN on MongoDB,
//     no document read without a search), stopped at Config.RowCountCap;
//     a RowPage whose counts reached it says so (Capped), and the table
//     then shows "at least" that many. Counts are not kept by the writes:
//     a counter document needs an atomic $inc, which FerretDB v1 does not
//     give under concurrency.
//
// On FerretDB v1 these indexes exist, but its query planner (PostgreSQL
// under a JSONB column) pushes down only simple equality filters; sorts,
// $all and the regex run in FerretDB over the scenario's documents. The
// tests check index use with explain on MongoDB and record FerretDB's
// pushdown answer; docs/BENCHMARKS.md has FerretDB's page times.

// DefaultRowCountCap is Config.RowCountCap's default.
const DefaultRowCountCap = 1_000_000

var _ store.RowTable = (*Store)(nil)

// fieldIndex names a field's sort index.
func fieldIndex(field string) string { return "ix_rows_f_" + hex.EncodeToString([]byte(field)) }

// rowTableIndexes are the indexes every scenario's table uses.
func (s *Store) rowTableIndexes() []indexSpec {
	return []indexSpec{
		{s.rows, "ix_rows_search", bson.D{{Key: "scenario", Value: 1}, {Key: "sg", Value: 1}}, false},
		{s.rows, "ix_rows_esearch", bson.D{{Key: "scenario", Value: 1}, {Key: "eg", Value: 1}}, false},
		{s.rows, "ix_rows_is_active", colKeys(store.SortIsActive), false},
		{s.rows, "ix_rows_next_fire", colKeys(store.SortNextFire), false},
		{s.rows, "ix_rows_last_fire", colKeys(store.SortLastFire), false},
		{s.rows, "ix_rows_last_status", bson.D{{Key: "scenario", Value: 1}, {Key: "last_status", Value: 1}}, false},
	}
}

// colKeys is the sort index of a column: (scenario, col, _id).
func colKeys(col string) bson.D {
	return bson.D{{Key: "scenario", Value: 1}, {Key: col, Value: 1}, {Key: "_id", Value: 1}}
}

// sortable remembers the fields whose sort index is known to exist, so a
// page does not list indexes.
type sortable struct {
	mu     sync.Mutex
	fields map[string]bool
}

func (c *sortable) has(f string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fields[f]
}

func (c *sortable) add(fs ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fields == nil {
		c.fields = map[string]bool{}
	}
	for _, f := range fs {
		c.fields[f] = true
	}
}

// isSortable reports whether field's sort index exists: known since
// PrepareRowTable ran here, or listed by the server (another process
// prepared it).
func (s *Store) isSortable(ctx context.Context, field string) (bool, error) {
	if s.sortable.has(field) {
		return true, nil
	}
	names, err := indexNames(ctx, s.rows)
	if err != nil {
		return false, fmt.Errorf("list indexes of rows: %w", err)
	}
	if !names[fieldIndex(field)] {
		return false, nil
	}
	s.sortable.add(field)
	return true, nil
}

// PrepareRowTable creates the sort index of each field (the search and
// column indexes exist since Open) and fills the search keys of rows that
// lack them (rows written before this driver kept them, e.g. by an older
// version). It is idempotent; several processes may run it at once.
func (s *Store) PrepareRowTable(ctx context.Context, scenario string, sortFields []string) error {
	var specs []indexSpec
	for _, f := range sortFields {
		if !store.ValidSortField(f) {
			return fmt.Errorf("prepare row table %s: %w", scenario,
				task.Invalid("sort_fields", "%q is not a field name", task.Truncate(f, 70)))
		}
		keys := bson.D{{Key: "scenario", Value: 1}, {Key: "fields." + f, Value: 1}, {Key: "_id", Value: 1}}
		specs = append(specs, indexSpec{s.rows, fieldIndex(f), keys, false})
	}
	ctx, cancel := context.WithTimeout(ctx, dumpTimeout)
	defer cancel()
	if err := s.ensureIndexes(ctx, specs); err != nil {
		return fmt.Errorf("prepare row table %s: %w", scenario, err)
	}
	s.sortable.add(sortFields...)
	if err := s.backfillSearchKeys(ctx, scenario); err != nil {
		return fmt.Errorf("prepare row table %s: %w", scenario, err)
	}
	return nil
}

// backfillSearchKeys sets the search keys of the scenario's rows that have
// none (st is missing only on rows this driver's writes did not make), a
// bulk write per s.bulkMax rows.
func (s *Store) backfillSearchKeys(ctx context.Context, scenario string) error {
	filter := bson.D{{Key: "scenario", Value: scenario}, {Key: "st", Value: bson.D{{Key: "$exists", Value: false}}}}
	cur, err := s.rows.Find(ctx, filter, findOpts())
	if err != nil {
		return err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	var models []mongo.WriteModel
	flush := func() error {
		if len(models) == 0 {
			return nil
		}
		_, err := s.rows.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
		models = models[:0]
		return err
	}
	for cur.Next(ctx) {
		var d rowDoc
		if err := cur.Decode(&d); err != nil {
			return err
		}
		k := searchKeysOf(d.Fields, d.Error)
		models = append(models, mongo.NewUpdateOneModel().SetFilter(rowKey(d.Scenario, d.ID)).
			SetUpdate(bson.D{{Key: "$set", Value: k.set()}}))
		if len(models) == s.bulkMax {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := cur.Err(); err != nil {
		return err
	}
	return flush()
}

// QueryRows returns one page of rows, see store.RowTable.
func (s *Store) QueryRows(ctx context.Context, q store.RowQuery) (*store.RowPage, error) {
	page, err := s.queryRows(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("query rows of %s: %w", q.Scenario, err)
	}
	return page, nil
}

func (s *Store) queryRows(ctx context.Context, q store.RowQuery) (*store.RowPage, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	plan, err := s.planRows(ctx, q)
	if err != nil {
		return nil, err
	}
	page := &store.RowPage{}
	var capped bool
	if page.Total, capped, err = s.countRows(ctx, plan.scope); err != nil {
		return nil, fmt.Errorf("count rows: %w", err)
	}
	page.Capped = capped
	page.Filtered = page.Total
	if q.Search != "" || !q.Filter.IsZero() {
		if page.Filtered, capped, err = s.countRows(ctx, plan.filter); err != nil {
			return nil, fmt.Errorf("count matches: %w", err)
		}
		page.Capped = page.Capped || capped
	}
	var docs []rowDoc
	if q.Sort.Column == store.SortNextFire {
		docs, err = s.nextFireDocs(ctx, plan, q)
	} else {
		cur, ferr := s.rows.Find(ctx, plan.filter, plan.find)
		docs, err = findAll[rowDoc](ctx, cur, ferr)
	}
	if err != nil {
		return nil, fmt.Errorf("read page: %w", err)
	}
	page.Rows = make([]*task.Row, len(docs))
	for i := range docs {
		page.Rows[i] = docs[i].row()
	}
	if q.WithTasks {
		if page.Tasks, err = s.rowTasks(ctx, q.Scenario, page.Rows); err != nil {
			return nil, fmt.Errorf("read the page's tasks: %w", err)
		}
	}
	return page, nil
}

// rowTaskDoc is the part of a time_task document the table shows.
type rowTaskDoc struct {
	TaskID    string     `bson:"task_id"`
	RowID     string     `bson:"row_id"`
	State     task.State `bson:"state"`
	IsEnable  int        `bson:"is_enable"`
	IsDone    int        `bson:"is_done"`
	UpdatedAt int64      `bson:"updated_at"`
}

// rowTasksFilter selects the live tasks of a scenario's rows ids; served
// by ix_task_row (scenario, row_id).
func rowTasksFilter(scenario string, ids []string) bson.D {
	return bson.D{{Key: "scenario", Value: scenario}, {Key: "row_id", Value: bson.D{{Key: "$in", Value: ids}}},
		{Key: "deleted", Value: 0}}
}

// rowTasksProjection is what rowTaskDoc reads of a task.
func rowTasksProjection() bson.D {
	return bson.D{{Key: "_id", Value: 0}, {Key: "task_id", Value: 1}, {Key: "row_id", Value: 1}, {Key: "state", Value: 1},
		{Key: "is_enable", Value: 1}, {Key: "is_done", Value: 1}, {Key: "updated_at", Value: 1}}
}

// rowTasks reads the live tasks of rows (one scenario's) in one find over
// ix_task_row (scenario, row_id). The page's rows and their tasks are two
// reads, not a snapshot: a task may be a moment newer than its row. Should
// a row have two live tasks (ApplySync retires the old one when the id
// field changes, so it has not), the one updated last wins.
func (s *Store) rowTasks(ctx context.Context, scenario string, rows []*task.Row) (map[string]*store.RowTask, error) {
	tasks := map[string]*store.RowTask{}
	if len(rows) == 0 {
		return tasks, nil
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	cur, err := s.tasks.Find(ctx, rowTasksFilter(scenario, ids), findOpts().SetProjection(rowTasksProjection()))
	docs, err := findAll[rowTaskDoc](ctx, cur, err)
	if err != nil {
		return nil, err
	}
	updated := map[string]int64{}
	for _, d := range docs {
		if at, ok := updated[d.RowID]; ok && at > d.UpdatedAt {
			continue
		}
		updated[d.RowID] = d.UpdatedAt
		tasks[d.RowID] = &store.RowTask{TaskID: d.TaskID, State: d.State, Enabled: d.IsEnable == 1, Done: d.IsDone == 1}
	}
	return tasks, nil
}

// rowPlan is how a RowQuery is asked of the server.
type rowPlan struct {
	scope  bson.D // the scenario's rows
	filter bson.D // the rows the search keeps
	sort   bson.D
	hint   string // the sort's index
	hinted bool   // the page is sent with hint (no search, no filter, not FerretDB)
	find   *options.FindOptionsBuilder
}

// planRows validates q and builds its filter, sort and options.
func (s *Store) planRows(ctx context.Context, q store.RowQuery) (*rowPlan, error) {
	if q.Limit < 1 || q.Limit > store.MaxRowPage {
		return nil, task.Invalid("limit", "must be from 1 to %d, got %d", store.MaxRowPage, q.Limit)
	}
	if q.Offset < 0 {
		return nil, task.Invalid("offset", "must not be negative, got %d", q.Offset)
	}
	if err := checkSearch(q.Search); err != nil {
		return nil, err
	}
	sort, hint, err := s.sortOf(ctx, q.Sort)
	if err != nil {
		return nil, err
	}
	p := &rowPlan{scope: bson.D{{Key: "scenario", Value: q.Scenario}}, sort: sort, hint: hint}
	p.filter = p.scope
	p.find = findOpts().SetSort(sort).SetSkip(int64(q.Offset)).SetLimit(int64(q.Limit)).
		SetProjection(rowProjection())
	cond, err := filterOf(q.Filter)
	if err != nil {
		return nil, err
	}
	switch {
	case q.Search != "" && len(cond) > 0:
		p.filter = bson.D{{Key: "$and", Value: bson.A{searchFilter(q.Scenario, q.Search), append(bson.D{}, cond...)}}}
	case q.Search != "":
		p.filter = searchFilter(q.Scenario, q.Search)
	case len(cond) > 0:
		p.filter = append(bson.D{{Key: "scenario", Value: q.Scenario}}, cond...)
	case !s.ferret:
		// Without a search the page is a walk of the sort index; the hint
		// keeps the planner from trying another one. FerretDB v1 ignores
		// hints and refuses some, so none is sent there.
		p.find.SetHint(hint)
		p.hinted = true
	}
	return p, nil
}

// filterOf is the conditions of a RowFilter on a row document (none for
// the zero filter). The state and due conditions are served by the
// (scenario, is_active), (scenario, last_status) and (scenario, next_fire)
// indexes; a field's by its sort index when the field is sortable.
func filterOf(f store.RowFilter) (bson.D, error) {
	var d bson.D
	switch f.State {
	case "":
	case store.RowStateError:
		d = append(d, bson.E{Key: "is_active", Value: -1})
	case store.RowStateOff:
		d = append(d, bson.E{Key: "is_active", Value: 0})
	case store.RowStateFailing:
		d = append(d, bson.E{Key: "last_status", Value: bson.D{{Key: "$in", Value: store.FailingStatuses()}}})
	default:
		return nil, task.Invalid("filter", "unknown state %q", task.Truncate(f.State, 32))
	}
	if !f.DueBy.IsZero() {
		if f.State != "" {
			return nil, task.Invalid("filter", "a state and a due time do not combine")
		}
		d = append(d, bson.E{Key: "is_active", Value: 1},
			bson.E{Key: "next_fire", Value: bson.D{{Key: "$gt", Value: int64(0)}, {Key: "$lte", Value: f.DueBy.UnixMilli()}}})
	}
	if f.Field != "" {
		if !store.ValidSortField(f.Field) {
			return nil, task.Invalid("filter", "%q is not a field name", task.Truncate(f.Field, 70))
		}
		key := "fields." + f.Field
		if f.OrMissing {
			d = append(d, bson.E{Key: key, Value: bson.D{{Key: "$in", Value: bson.A{f.Value, "", nil}}}})
		} else {
			d = append(d, bson.E{Key: key, Value: f.Value})
		}
	}
	return d, nil
}

// rowProjection leaves the search keys out of a page.
func rowProjection() bson.D {
	return bson.D{{Key: "sg", Value: 0}, {Key: "eg", Value: 0}, {Key: "st", Value: 0}}
}

// searchFilter keeps the scenario's rows whose field values or error
// contain search, ignoring case.
func searchFilter(scenario, search string) bson.D {
	text := strings.ToLower(strings.TrimSpace(search))
	grams := trigrams(text)
	re := bson.Regex{Pattern: regexp.QuoteMeta(text)}
	if len(grams) == 0 {
		// One or two Chinese characters have no trigram: the regex alone
		// matches them, over the scenario's rows (through the scenario
		// prefix of an index, but every row of it is read).
		return bson.D{{Key: "scenario", Value: scenario}, {Key: "$or", Value: bson.A{
			bson.D{{Key: "st", Value: re}},
			bson.D{{Key: "error", Value: bson.Regex{Pattern: regexp.QuoteMeta(text), Options: "i"}}},
		}}}
	}
	// Each branch names the scenario itself, so each is one index range
	// (scenario, one trigram) on its own index.
	return bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "scenario", Value: scenario}, {Key: "sg", Value: bson.D{{Key: "$all", Value: grams}}},
			{Key: "st", Value: re}},
		bson.D{{Key: "scenario", Value: scenario}, {Key: "eg", Value: bson.D{{Key: "$all", Value: grams}}},
			{Key: "error", Value: bson.Regex{Pattern: regexp.QuoteMeta(text), Options: "i"}}},
	}}}
}

// sortOf returns a sort's keys and the index that serves it.
func (s *Store) sortOf(ctx context.Context, so store.RowSort) (bson.D, string, error) {
	dir := 1
	if so.Desc {
		dir = -1
	}
	switch {
	case so.Field != "" && so.Column != "":
		return nil, "", task.Invalid("sort", "give a field or a column, not both")
	case so.Field != "":
		if !store.ValidSortField(so.Field) {
			return nil, "", task.Invalid("sort", "%q is not a field name", task.Truncate(so.Field, 70))
		}
		ok, err := s.isSortable(ctx, so.Field)
		if err != nil {
			return nil, "", err
		}
		if !ok {
			return nil, "", task.Invalid("sort", "field %q is not sortable (no index; see PrepareRowTable)", so.Field)
		}
		return bson.D{{Key: "fields." + so.Field, Value: dir}, {Key: "_id", Value: dir}}, fieldIndex(so.Field), nil
	case so.Column == "" || so.Column == store.SortID:
		return bson.D{{Key: "id", Value: dir}}, "ux_rows_key", nil
	case slices.Contains(store.RowSortColumns(), so.Column):
		return bson.D{{Key: so.Column, Value: dir}, {Key: "_id", Value: dir}}, "ix_rows_" + so.Column, nil
	}
	return nil, "", task.Invalid("sort", "unknown column %q", task.Truncate(so.Column, 70))
}

// countRows counts filter's rows up to the count cap; capped says the cap
// was reached (the count is then a lower bound).
func (s *Store) countRows(ctx context.Context, filter bson.D) (int64, bool, error) {
	n, err := s.rows.CountDocuments(ctx, filter, options.Count().SetLimit(s.countCap))
	return n, n >= s.countCap, err
}

// checkSearch bounds a search text (the same rules as the SQLite driver).
func checkSearch(search string) error {
	switch {
	case search == "":
		return nil
	case len(search) > store.MaxRowSearch:
		return task.Invalid("search", "is %d bytes long; at most %d", len(search), store.MaxRowSearch)
	case !utf8.ValidString(search):
		return task.Invalid("search", "is not valid UTF-8")
	case utf8.RuneCountInString(strings.TrimSpace(search)) < store.SearchMin(search):
		return task.Invalid("search", "needs at least %d characters", store.SearchMin(search))
	}
	return nil
}

// searchKeys are the search fields a row document carries.
type searchKeys struct {
	text   []string // st: lower-cased field values
	grams  []string // sg: their trigrams
	egrams []string // eg: the error's trigrams
}

// set is the $set that stores k.
func (k searchKeys) set() bson.D {
	return bson.D{{Key: "st", Value: k.text}, {Key: "sg", Value: k.grams}, {Key: "eg", Value: k.egrams}}
}

// searchKeysOf computes a row's search keys from its fields and error.
func searchKeysOf(fields map[string]any, errText string) searchKeys {
	k := searchKeys{text: []string{}, grams: []string{}, egrams: errorGrams(errText)}
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		v := strings.ToLower(valueText(fields[name]))
		if v == "" {
			continue
		}
		k.text = append(k.text, v)
		for _, g := range trigrams(v) {
			if !seen[g] {
				seen[g] = true
				k.grams = append(k.grams, g)
			}
		}
	}
	return k
}

// errorGrams are the trigrams of a row's error, lower-cased.
func errorGrams(errText string) []string {
	g := trigrams(strings.ToLower(errText))
	slices.Sort(g)
	return slices.Compact(g)
}

// valueText is the text a field value is searched as: strings as they are,
// numbers and booleans as JSON spells them, objects and arrays as JSON.
func valueText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// trigrams returns the distinct three-rune substrings of s, in order of
// first occurrence (none when s is shorter).
func trigrams(s string) []string {
	r := []rune(s)
	out := []string{}
	seen := map[string]bool{}
	for i := 0; i+3 <= len(r); i++ {
		g := string(r[i : i+3])
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}
