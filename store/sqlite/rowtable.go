package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"cronsheet/store"
	"cronsheet/task"
)

// The web table (store.RowTable) on SQLite.
//
//   - Search: rows_fts is an FTS5 table with the trigram tokenizer over each
//     row's field values and its error; triggers on rows keep it in step
//     (rowid = rows.rowid). A search is a quoted FTS5 phrase, so it matches
//     any substring of 3+ characters, case-insensitively, through the
//     index rather than a LIKE scan (docs/DESIGN.md, "Storage"). A search of one or two Chinese, Japanese or Korean characters
//     (store.SearchMin) has no trigram: it is a LIKE over rows_fts's text,
//     which reads all of it.
//   - Filters (store.RowFilter): is_active, last_status (failing) and
//     next_fire through their indexes, a field through its
//     sort index.
//   - Sort: an expression index (scenario, json_extract(fields,'$.f')
//     COLLATE NOCASE) per sortable field, named ix_rows_f_<hex of f>, and
//     (scenario, col) indexes on is_active and last_fire. The next fire
//     sort puts rows with no next fire (next_fire 0: switched off,
//     invalid, done, not armed yet) after the scheduled ones, in rowid
//     order (descending: the reverse), like PostgreSQL's NULLS LAST: its
//     index is ix_rows_fire_order (scenario, next_fire = 0, next_fire),
//     whose expression the ORDER BY spells the same way. A page
//     first picks its rowids from the covering index (LIMIT/OFFSET walks
//     index entries only, never the table) and then reads those rows. The
//     next_fire/last_fire/last_status indexes cost one B-tree write each
//     per fire whose values change (mirrorStatus rewrites them); that is
//     the price of sorting and filtering by them.
//   - Counts: row_counts(scenario, n), kept by the insert and delete
//     triggers, so recordsTotal is one lookup.
//
// VACUUM may renumber rows' rowids (rows has no INTEGER PRIMARY KEY, and
// schema.go is not the web table's to change), which would detach rows_fts
// from rows; nothing runs VACUUM today. If something does, drop rows_fts and
// let PrepareRowTable rebuild it.
var rowTableSchema = `
CREATE VIRTUAL TABLE rows_fts USING fts5(body, tokenize = 'trigram');
INSERT INTO rows_fts (rowid, body) SELECT rowid, ` + ftsBody("rows") + ` FROM rows;

CREATE TABLE IF NOT EXISTS row_counts (
	scenario TEXT PRIMARY KEY,
	n        INTEGER NOT NULL
);
DELETE FROM row_counts;
INSERT INTO row_counts (scenario, n) SELECT scenario, count(*) FROM rows GROUP BY scenario;

CREATE TRIGGER IF NOT EXISTS tr_rows_table_ins AFTER INSERT ON rows BEGIN
	INSERT INTO rows_fts (rowid, body) VALUES (new.rowid, ` + ftsBody("new") + `);
	INSERT INTO row_counts (scenario, n) VALUES (new.scenario, 1)
		ON CONFLICT (scenario) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS tr_rows_table_upd AFTER UPDATE OF fields, error ON rows
WHEN old.fields IS NOT new.fields OR old.error IS NOT new.error BEGIN
	DELETE FROM rows_fts WHERE rowid = old.rowid;
	INSERT INTO rows_fts (rowid, body) VALUES (new.rowid, ` + ftsBody("new") + `);
END;
CREATE TRIGGER IF NOT EXISTS tr_rows_table_del AFTER DELETE ON rows BEGIN
	DELETE FROM rows_fts WHERE rowid = old.rowid;
	UPDATE row_counts SET n = n - 1 WHERE scenario = old.scenario;
END;

CREATE INDEX IF NOT EXISTS ix_rows_is_active ON rows (scenario, is_active);
CREATE INDEX IF NOT EXISTS ix_rows_last_fire ON rows (scenario, last_fire);
`

// ftsBody is the searchable text of a row named t: its field values and
// its error.
func ftsBody(t string) string {
	return `coalesce((SELECT group_concat(value, ' ') FROM json_each(` + t + `.fields)), '') || ' ' || ` + t + `.error`
}

// fieldExpr is the expression a field's sort index is built on and that
// queries must spell the same way for the planner to use it.
func fieldExpr(field string) string {
	return `json_extract(fields, '$.` + field + `') COLLATE NOCASE`
}

// qLastStatusIndex serves the failing filter (store.RowStateFailing).
const qLastStatusIndex = `CREATE INDEX IF NOT EXISTS ix_rows_last_status ON rows (scenario, last_status)`

// idleExpr is the first key of the next fire order: 1 for a row with no
// next fire (next_fire 0), which sorts it after the scheduled ones. The
// index and the queries must spell it the same way.
const idleExpr = `(rows.next_fire = 0)`

// qNextFireIndexes make ix_rows_fire_order, which serves the next fire
// sort (scheduled rows soonest first, then idle rows in rowid order) and
// the due filter, and drop ix_rows_next_fire (scenario, next_fire), which
// sorted idle rows first and which this index makes redundant.
const qNextFireIndexes = `CREATE INDEX IF NOT EXISTS ix_rows_fire_order ON rows (scenario, next_fire = 0, next_fire);
DROP INDEX IF EXISTS ix_rows_next_fire;`

// fieldIndex names a field's sort index; hex keeps Title and title apart
// (SQLite names are case-insensitive).
func fieldIndex(field string) string { return "ix_rows_f_" + hex.EncodeToString([]byte(field)) }

var _ store.RowTable = (*Store)(nil)

// PrepareRowTable creates rows_fts (filling it from the rows there are),
// row_counts, their triggers, the status indexes and a sort index per field.
// It runs in one write transaction, so concurrent callers do it once.
func (s *Store) PrepareRowTable(ctx context.Context, scenario string, sortFields []string) error {
	for _, f := range sortFields {
		if !store.ValidSortField(f) {
			return fmt.Errorf("prepare row table %s: %w", scenario,
				task.Invalid("sort_fields", "%q is not a field name", task.Truncate(f, 70)))
		}
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx,
			`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'rows_fts'`).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			if _, err := tx.ExecContext(ctx, rowTableSchema); err != nil {
				return fmt.Errorf("create search index: %w", err)
			}
		}
		// Made on every prepare, not only with rowTableSchema, so a
		// database whose table is already set up gets it too.
		if _, err := tx.ExecContext(ctx, qLastStatusIndex); err != nil {
			return fmt.Errorf("create the last status index: %w", err)
		}
		if _, err := tx.ExecContext(ctx, qNextFireIndexes); err != nil {
			return fmt.Errorf("create the next fire index: %w", err)
		}
		for _, f := range sortFields {
			q := `CREATE INDEX IF NOT EXISTS ` + fieldIndex(f) + ` ON rows (scenario, ` + fieldExpr(f) + `)`
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("create sort index on %s: %w", f, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("prepare row table %s: %w", scenario, err)
	}
	return nil
}

// QueryRows returns one page of rows, see store.RowTable.
func (s *Store) QueryRows(ctx context.Context, q store.RowQuery) (*store.RowPage, error) {
	page, err := s.queryRows(ctx, q, broadSearch)
	if err != nil {
		return nil, fmt.Errorf("query rows of %s: %w", q.Scenario, err)
	}
	return page, nil
}

// queryRows pages rows; a search with more than broad matches walks the
// sort index (tests pass other thresholds to compare both plans).
func (s *Store) queryRows(ctx context.Context, q store.RowQuery, broad int64) (*store.RowPage, error) {
	if q.Limit < 1 || q.Limit > store.MaxRowPage {
		return nil, task.Invalid("limit", "must be from 1 to %d, got %d", store.MaxRowPage, q.Limit)
	}
	if q.Offset < 0 {
		return nil, task.Invalid("offset", "must not be negative, got %d", q.Offset)
	}
	if err := checkSearch(q.Search); err != nil {
		return nil, err
	}
	order, err := s.orderBy(ctx, q.Sort)
	if err != nil {
		return nil, err
	}
	reversed := q.Sort
	reversed.Desc = !reversed.Desc
	backward, err := s.orderBy(ctx, reversed)
	if err != nil {
		return nil, err
	}
	// One read transaction: the counts and the page see the same snapshot.
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()

	page := &store.RowPage{}
	err = tx.QueryRowContext(ctx, `SELECT coalesce((SELECT n FROM row_counts WHERE scenario = ?), 0)`,
		q.Scenario).Scan(&page.Total)
	if err != nil {
		return nil, fmt.Errorf("count rows (was PrepareRowTable called?): %w", err)
	}
	plan, err := planPage(ctx, tx, q, page, order, backward, broad)
	if err != nil {
		return nil, err
	}
	if plan.empty {
		page.Rows = []*task.Row{}
		return page, nil
	}
	if page.Rows, err = readPage(ctx, tx, plan, q.Limit); err != nil {
		return nil, err
	}
	if q.WithTasks {
		if page.Tasks, err = rowTasks(ctx, tx, q.Scenario, page.Rows); err != nil {
			return nil, fmt.Errorf("read the page's tasks: %w", err)
		}
	}
	return page, nil
}

// pagePlan is the page query queryRows runs: its SQL and arguments, and
// whether it reads the page backwards (its rows are then reversed). empty
// says the page lies past the end: there is nothing to read.
type pagePlan struct {
	query   string
	args    []any
	reverse bool
	empty   bool
}

// planPage counts, in tx, the rows q selects into page.Filtered (page.Total
// is set) and picks the query that reads q's page in order (or backward,
// its reverse); a search with more than broad matches walks the sort index.
func planPage(ctx context.Context, tx *sql.Tx, q store.RowQuery, page *store.RowPage, order, backward string, broad int64) (pagePlan, error) {
	cond, condArgs, err := filterSQL(q.Filter)
	if err != nil {
		return pagePlan{}, err
	}
	switch {
	case q.Search == "" && cond != "":
		countArgs := append([]any{q.Scenario}, condArgs...)
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM rows WHERE scenario = ?`+cond, countArgs...).
			Scan(&page.Filtered); err != nil {
			return pagePlan{}, err
		}
		query := `SELECT ` + rowCols + ` FROM rows WHERE rowid IN (SELECT rowid FROM rows WHERE scenario = ?` + cond +
			` ORDER BY ` + order + ` LIMIT ? OFFSET ?) ORDER BY ` + order
		return pagePlan{query: query, args: append(countArgs, q.Limit, q.Offset)}, nil
	case q.Search == "":
		page.Filtered = page.Total
		// A page in the back half is read from the end of the index in the
		// other direction: OFFSET then walks at most half the entries. The
		// count is exact (same snapshot), so the pages are the same.
		if int64(q.Offset) > page.Total/2 {
			off, limit := page.Total-int64(q.Offset)-int64(q.Limit), int64(q.Limit)
			if off < 0 {
				limit, off = limit+off, 0
			}
			if limit <= 0 {
				return pagePlan{empty: true}, nil
			}
			return pagePlan{query: pageSQL(backward, false), args: []any{q.Scenario, limit, off}, reverse: true}, nil
		}
		return pagePlan{query: pageSQL(order, false), args: []any{q.Scenario, q.Limit, q.Offset}}, nil
	default:
		matchCond, match := searchMatch(q.Search)
		from := searchFrom(matchCond) + cond
		countArgs := append([]any{match, q.Scenario}, condArgs...)
		if err := tx.QueryRowContext(ctx, `SELECT count(*)`+from, countArgs...).Scan(&page.Filtered); err != nil {
			return pagePlan{}, err
		}
		if page.Filtered > broad {
			// Many matches: walking the sort index and keeping the matches
			// beats sorting them all.
			return pagePlan{query: broadPageSQL(order, matchCond, cond),
				args: append(append([]any{q.Scenario}, condArgs...), match, q.Limit, q.Offset)}, nil
		}
		return pagePlan{query: searchPageSQL(order, matchCond, cond), args: append(countArgs, q.Limit, q.Offset)}, nil
	}
}

// readPage runs plan in tx and returns its rows in page order.
func readPage(ctx context.Context, tx *sql.Tx, plan pagePlan, limit int) ([]*task.Row, error) {
	rs, err := tx.QueryContext(ctx, plan.query, plan.args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	rows := make([]*task.Row, 0, limit)
	for rs.Next() {
		row, err := scanRow(rs)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	if plan.reverse {
		slices.Reverse(rows)
	}
	return rows, nil
}

// rowTasksSQL reads the live tasks of n rows (args: scenario, the n row
// ids) through ix_task_row (scenario, row_id).
func rowTasksSQL(n int) string {
	return `SELECT row_id, task_id, coalesce(json_extract(doc, '$.state'), ''), is_enable, is_done FROM time_task
		WHERE scenario = ? AND row_id IN (?` + strings.Repeat(", ?", n-1) + `) AND row_id <> '' AND deleted = 0
		ORDER BY updated_at, id`
}

// rowTasks reads the live tasks of rows (one scenario's) through
// ix_task_row, in the page's read transaction. Should a row have two live
// tasks (ApplySync retires the old one when the id field changes, so it
// has not), the one updated last wins.
func rowTasks(ctx context.Context, tx *sql.Tx, scenario string, rows []*task.Row) (map[string]*store.RowTask, error) {
	tasks := map[string]*store.RowTask{}
	if len(rows) == 0 {
		return tasks, nil
	}
	args := make([]any, 0, len(rows)+1)
	args = append(args, scenario)
	for _, r := range rows {
		args = append(args, r.ID)
	}
	rs, err := tx.QueryContext(ctx, rowTasksSQL(len(rows)), args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	for rs.Next() {
		var (
			rowID, state   string
			enable, isDone int
			t              store.RowTask
		)
		if err := rs.Scan(&rowID, &t.TaskID, &state, &enable, &isDone); err != nil {
			return nil, err
		}
		t.State, t.Enabled, t.Done = task.State(state), enable == 1, isDone == 1
		tasks[rowID] = &t
	}
	return tasks, rs.Err()
}

// searchFrom joins the search's matches (match: searchMatch's condition)
// to their rows (args: its argument, scenario). CROSS JOIN keeps rows_fts
// the outer loop: the matches are found through the trigram index and
// then sorted, never the rows walked in order and tested one by one.
func searchFrom(match string) string {
	return ` FROM rows_fts CROSS JOIN rows ON rows.rowid = rows_fts.rowid
	WHERE ` + match + ` AND rows.scenario = ?`
}

// ftsMatch is the search condition of a search of three or more runes.
const ftsMatch = "rows_fts MATCH ?"

// searchCountSQL counts a search's matches in a scenario (args: phrase,
// scenario).
const searchCountSQL = `SELECT count(*) FROM rows_fts CROSS JOIN rows ON rows.rowid = rows_fts.rowid
	WHERE ` + ftsMatch + ` AND rows.scenario = ?`

// pageSQL is the query of one page without a filter. Without a search
// (args: scenario, limit, offset) the page's rowids come from a covering
// index, so OFFSET skips index entries, not rows, and only the page's rows
// are read. With one (args: phrase, scenario, limit, offset) the matches
// are sorted.
func pageSQL(order string, search bool) string {
	if !search {
		return `SELECT ` + rowCols + ` FROM rows WHERE rowid IN (` + pageIDsSQL(order) + `) ORDER BY ` + order
	}
	return searchPageSQL(order, ftsMatch, "")
}

// searchPageSQL is the page of a search (match: searchMatch's condition)
// and a filter's condition (args: match's, scenario, the filter's, limit,
// offset).
func searchPageSQL(order, match, cond string) string {
	return `SELECT ` + qualified(rowCols) + searchFrom(match) + cond + ` ORDER BY ` + order + ` LIMIT ? OFFSET ?`
}

// broadSearch is the match count above which a search's page walks the sort
// index rather than sorting the matches.
const broadSearch = 2000

// broadPageSQL is the page of a search with many matches (args: scenario,
// the filter's arguments, the match's, limit, offset): the match set is
// built once, the sort index is walked in order and the walk stops after
// the page.
func broadPageSQL(order, match, cond string) string {
	return `SELECT ` + rowCols + ` FROM rows WHERE rowid IN (SELECT rowid FROM rows WHERE scenario = ?` + cond + `
		AND rowid IN (SELECT rowid FROM rows_fts WHERE ` + match + `) ORDER BY ` + order + ` LIMIT ? OFFSET ?)
		ORDER BY ` + order
}

// pageIDsSQL picks a page's rowids (args: scenario, limit, offset).
func pageIDsSQL(order string) string {
	return `SELECT rowid FROM rows WHERE scenario = ? ORDER BY ` + order + ` LIMIT ? OFFSET ?`
}

// checkSearch bounds a search text.
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

// searchMatch is the condition on rows_fts a search is (its one argument
// is arg): a quoted FTS5 phrase through the trigram index; a search too
// short for a trigram (one or two Chinese characters) is a LIKE over the
// index's text instead, which reads every entry of rows_fts.
func searchMatch(search string) (cond string, arg string) {
	if !store.ShortSearch(search) {
		return ftsMatch, ftsPhrase(search)
	}
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return `rows_fts.body LIKE ? ESCAPE '\'`, "%" + r.Replace(strings.TrimSpace(search)) + "%"
}

// filterSQL is the condition of a RowFilter on rows (" AND …", "" for
// none) and its arguments.
func filterSQL(f store.RowFilter) (string, []any, error) {
	var (
		conds []string
		args  []any
	)
	switch f.State {
	case "":
	case store.RowStateError:
		conds = append(conds, "rows.is_active = -1")
	case store.RowStateOff:
		conds = append(conds, "rows.is_active = 0")
	case store.RowStateFailing:
		fs := store.FailingStatuses()
		conds = append(conds, "rows.last_status IN (?"+strings.Repeat(", ?", len(fs)-1)+")")
		for _, s := range fs {
			args = append(args, s)
		}
	default:
		return "", nil, task.Invalid("filter", "unknown state %q", task.Truncate(f.State, 32))
	}
	if !f.DueBy.IsZero() {
		if f.State != "" {
			return "", nil, task.Invalid("filter", "a state and a due time do not combine")
		}
		// idleExpr = 0 names ix_rows_fire_order's second key, so the
		// range on next_fire is read from it.
		conds = append(conds, "rows.is_active = 1 AND "+idleExpr+" = 0 AND rows.next_fire > 0 AND rows.next_fire <= ?")
		args = append(args, f.DueBy.UnixMilli())
	}
	if f.Field != "" {
		if !store.ValidSortField(f.Field) {
			return "", nil, task.Invalid("filter", "%q is not a field name", task.Truncate(f.Field, 70))
		}
		c := fieldExpr(f.Field) + " = ?"
		if f.OrMissing {
			c = "(" + c + " OR " + fieldExpr(f.Field) + " = '' OR json_extract(fields, '$." + f.Field + "') IS NULL)"
		}
		conds = append(conds, c)
		args = append(args, f.Value)
	}
	if len(conds) == 0 {
		return "", nil, nil
	}
	return " AND " + strings.Join(conds, " AND "), args, nil
}

// ftsPhrase quotes search as one FTS5 string: with the trigram tokenizer it
// matches the text as a substring, whatever operators or quotes it holds.
func ftsPhrase(search string) string {
	return `"` + strings.ReplaceAll(strings.TrimSpace(search), `"`, `""`) + `"`
}

// qualified prefixes each of the comma-separated columns with "rows.".
func qualified(cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = "rows." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// orderBy returns the ORDER BY clause of a sort, checking that an index
// serves it. Ties are broken by rowid, in the same direction, so the index
// gives the whole order.
func (s *Store) orderBy(ctx context.Context, so store.RowSort) (string, error) {
	dir := " ASC"
	if so.Desc {
		dir = " DESC"
	}
	switch {
	case so.Field != "" && so.Column != "":
		return "", task.Invalid("sort", "give a field or a column, not both")
	case so.Field != "":
		if !store.ValidSortField(so.Field) {
			return "", task.Invalid("sort", "%q is not a field name", task.Truncate(so.Field, 70))
		}
		var n int
		err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?`,
			fieldIndex(so.Field)).Scan(&n)
		if err != nil {
			return "", err
		}
		if n == 0 {
			return "", task.Invalid("sort", "field %q is not sortable (no index; see PrepareRowTable)", so.Field)
		}
		return fieldExpr(so.Field) + dir + ", rows.rowid" + dir, nil
	case so.Column == "" || so.Column == store.SortID:
		return "rows.id" + dir, nil
	case so.Column == store.SortNextFire:
		// Rows with a next fire, soonest first, then those without
		// (NULLS LAST); descending is the exact reverse.
		return idleExpr + dir + ", rows.next_fire" + dir + ", rows.rowid" + dir, nil
	case slices.Contains(store.RowSortColumns(), so.Column):
		return "rows." + so.Column + dir + ", rows.rowid" + dir, nil
	}
	return "", task.Invalid("sort", "unknown column %q", task.Truncate(so.Column, 70))
}
