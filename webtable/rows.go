package webtable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// rowsPage is the answer of GET .../rows.
type rowsPage struct {
	Rows []*task.Row `json:"rows"`
	// NextAfter is the `after` of the next page, "" on the last page.
	NextAfter string `json:"next_after"`
}

// createRow handles POST /api/v1/scenarios/:scenario/rows.
func (a *API) createRow(c *gin.Context) {
	sc, err := a.scenario(c.Param("scenario"))
	if err != nil {
		a.WriteError(c, err)
		return
	}
	fields, err := httpapi.ReadObject(c)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	delete(fields, httpapi.VersionKey)
	id, err := sc.AssignID(fields)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	if err := sc.ValidateFields(fields); err != nil {
		a.WriteError(c, err)
		return
	}
	ctx := c.Request.Context()
	// The holds on the targets the row names last until it is stored, so
	// that a delete of one of them sees the row (targetCheck).
	targets := a.newTargetCheck()
	defer targets.release(ctx)
	if err := targets.check(ctx, sc, fields, nil); err != nil {
		a.WriteError(c, err)
		return
	}
	row := &task.Row{
		Scenario: sc.Name(),
		ID:       id,
		Fields:   fields,
		IsActive: isActive(sc, fields),
	}
	if err := a.store.InsertRow(ctx, row); err != nil {
		a.WriteError(c, httpapi.DescribeAs(err, task.ErrConflict, task.CodeAlreadyExists, "row %q already exists in scenario %q", id, sc.Name()))
		return
	}
	a.wake()
	saved, err := a.store.GetRow(ctx, sc.Name(), id)
	if err != nil {
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "row %q was deleted right after it was created", id))
		return
	}
	a.record(ctx, httpapi.Who(c), sc.Name(), id, store.AuditCreate, nil, saved.Fields)
	c.Header("Location", strings.TrimSuffix(c.Request.URL.Path, "/")+"/"+url.PathEscape(id))
	writeRow(c, http.StatusCreated, sc, saved)
}

// getRow handles GET /api/v1/scenarios/:scenario/rows/:id.
func (a *API) getRow(c *gin.Context) {
	sc, err := a.scenario(c.Param("scenario"))
	if err != nil {
		a.WriteError(c, err)
		return
	}
	id := c.Param("id")
	row, err := a.store.GetRow(c.Request.Context(), sc.Name(), id)
	if err != nil {
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "row %q not found in scenario %q", id, sc.Name()))
		return
	}
	writeRow(c, http.StatusOK, sc, row)
}

// listRows handles GET /api/v1/scenarios/:scenario/rows?after=&limit=.
func (a *API) listRows(c *gin.Context) {
	sc, err := a.scenario(c.Param("scenario"))
	if err != nil {
		a.WriteError(c, err)
		return
	}
	after, err := httpapi.StringQuery(c, "after")
	if err != nil {
		a.WriteError(c, err)
		return
	}
	limit, err := httpapi.IntQuery(c, "limit", httpapi.DefaultLimit, 1, httpapi.MaxLimit)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	// One extra row tells whether another page follows.
	rows, err := a.store.ListRows(c.Request.Context(), sc.Name(), after, limit+1)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	for _, r := range rows {
		hideIdleNextFire(sc, r, nil)
	}
	page := rowsPage{Rows: rows}
	if len(rows) > limit {
		page.Rows = rows[:limit]
		page.NextAfter = rows[limit-1].ID
	}
	if page.Rows == nil {
		page.Rows = []*task.Row{}
	}
	c.JSON(http.StatusOK, page)
}

// patchAttempts bounds how often a PATCH without If-Match re-reads and
// re-merges a row that another edit changed between its read and its
// write; every lost attempt means another edit was saved.
const patchAttempts = 32

// rowLocks serialises the edits of one row made through this node (a
// PATCH, a batch's row), so that they do not lose races against each
// other: only an edit through another node, or the sync patrol's write,
// can make one read, merge and write again: optimistic retries alone
// starve a busy row on a store whose reads and writes take milliseconds.
// Rows share stripes; an edit holds one at a time, so stripes cannot
// deadlock.
type rowLocks [64]sync.Mutex

// lock takes the stripe of scenario's row id and returns its unlock.
func (l *rowLocks) lock(scenario, id string) func() {
	h := fnv.New32a()
	_, _ = h.Write([]byte(scenario))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(id))
	m := &l[h.Sum32()%uint32(len(l))]
	m.Lock()
	return m.Unlock
}

// raceWait waits before attempt (2…patchAttempts) of an edit that lost a
// race: a random time up to 1 ms << attempt, at most 64 ms, so that the
// edits racing on one row from several nodes spread out instead of
// meeting again at once.
func raceWait(ctx context.Context, attempt int) {
	limit := min(time.Millisecond<<min(attempt, 6), 64*time.Millisecond)
	t := time.NewTimer(rand.N(limit))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// patchRow handles PATCH /api/v1/scenarios/:scenario/rows/:id: the body's
// fields are merged onto the stored ones (null removes a field), the result
// is validated and saved. With If-Match (or the body's _version) the row
// must still have that version, else 409. Without, the edit applies to the
// row as it is when saved (the last writer wins field by field): a
// concurrent edit between the read and the write makes it read and merge
// again, up to patchAttempts times.
func (a *API) patchRow(c *gin.Context) {
	sc, err := a.scenario(c.Param("scenario"))
	if err != nil {
		a.WriteError(c, err)
		return
	}
	id := c.Param("id")
	patch, err := httpapi.ReadObject(c)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	want, err := httpapi.IfMatch(c.GetHeader("If-Match"), patch)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	ctx := c.Request.Context()
	defer a.edits.lock(sc.Name(), id)()
	for attempt := 1; attempt <= patchAttempts; attempt++ {
		cur, row, err := a.patchOnce(ctx, sc, id, patch, want)
		if errors.Is(err, errEditRace) {
			raceWait(ctx, attempt+1)
			continue
		}
		if err != nil {
			a.WriteError(c, err)
			return
		}
		a.switchOff(ctx, sc, row)
		a.wake()
		a.record(ctx, httpapi.Who(c), sc.Name(), id, store.AuditUpdate, cur.Fields, row.Fields)
		writeRow(c, http.StatusOK, sc, row)
		return
	}
	a.WriteError(c, task.Conflict(task.CodeVersionConflict, "row %q kept changing while your edit was saved; try again", id))
}

// errEditRace is patchOnce's answer when another edit saved the row between
// its read and its write and the PATCH named no version: read again.
var errEditRace = errors.New("row changed between read and write")

// patchOnce reads row id, merges patch onto it, validates and saves it on
// the version read. It returns the row as read and as saved.
func (a *API) patchOnce(ctx context.Context, sc *mapping.Scenario, id string, patch map[string]any,
	want int64) (cur, saved *task.Row, err error) {
	cur, err = a.store.GetRow(ctx, sc.Name(), id)
	if err != nil {
		return nil, nil, httpapi.Describe(err, task.ErrNotFound, "row %q not found in scenario %q", id, sc.Name())
	}
	if want > 0 && want != cur.Version {
		return nil, nil, task.VersionConflict(fmt.Sprintf("row %q", id), cur.Version, want)
	}
	fields, err := merge(sc, cur, patch)
	if err != nil {
		return nil, nil, err
	}
	if err := sc.ValidateFields(fields); err != nil {
		return nil, nil, err
	}
	targets := a.newTargetCheck()
	defer targets.release(ctx)
	if err := targets.check(ctx, sc, fields, cur.Fields); err != nil {
		return nil, nil, err
	}
	saved, err = a.store.UpdateRowFields(ctx, store.UpdateRowParams{
		Scenario:  sc.Name(),
		ID:        id,
		Fields:    fields,
		IfVersion: cur.Version, // guards the read-merge-write against a concurrent edit
	})
	switch {
	case err == nil:
		return cur, saved, nil
	case want == 0 && errors.Is(err, task.ErrConflict):
		return nil, nil, errEditRace
	}
	err = httpapi.Describe(err, task.ErrNotFound, "row %q was deleted while saving", id)
	err = httpapi.DescribeAs(err, task.ErrConflict, task.CodeVersionConflict, "row %q changed while your edit was saved "+
		"(you sent version %d); reload and try again", id, want)
	return nil, nil, err
}

// deleteRow handles DELETE /api/v1/scenarios/:scenario/rows/:id. With
// If-Match the row is deleted only at that version (409 otherwise), so a
// delete decided on the row as read (cronsheet apply --prune) does not
// remove an edit made since.
func (a *API) deleteRow(c *gin.Context) {
	sc, err := a.scenario(c.Param("scenario"))
	if err != nil {
		a.WriteError(c, err)
		return
	}
	want, err := httpapi.IfMatch(c.GetHeader("If-Match"), nil)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	id := c.Param("id")
	ctx := c.Request.Context()
	var old map[string]any
	// The fields before the delete, for the audit trail; a missing row is
	// DeleteRow's 404.
	if cur, err := a.store.GetRow(ctx, sc.Name(), id); err == nil {
		old = cur.Fields
	}
	if err := a.store.DeleteRowIf(ctx, sc.Name(), id, want); err != nil {
		err = httpapi.Describe(err, task.ErrNotFound, "row %q not found in scenario %q", id, sc.Name())
		a.WriteError(c, httpapi.DescribeAs(err, task.ErrConflict, task.CodeVersionConflict,
			"row %q changed since version %d; it was not deleted, reload and try again", id, want))
		return
	}
	a.wake()
	a.record(ctx, httpapi.Who(c), sc.Name(), id, store.AuditDelete, old, nil)
	c.Status(http.StatusNoContent)
}

// writeRow answers with row (no next fire when it does not fire) and its
// version as ETag, for If-Match.
func writeRow(c *gin.Context, status int, sc *mapping.Scenario, row *task.Row) {
	hideIdleNextFire(sc, row, nil)
	httpapi.WriteVersioned(c, status, row.Version, row)
}

// merge returns cur's fields with patch applied: a null removes a field. The
// id field may be repeated unchanged but neither changed nor removed.
func merge(sc *mapping.Scenario, cur *task.Row, patch map[string]any) (map[string]any, error) {
	idField := sc.IDField()
	fields := maps.Clone(cur.Fields)
	if fields == nil {
		fields = make(map[string]any, len(patch))
	}
	for k, v := range patch {
		if k == idField {
			if v == nil || fmt.Sprint(v) != cur.ID {
				return nil, task.Invalid(idField, "the id of a row cannot change (it is %q); "+
					"create a new row instead", cur.ID)
			}
		}
		if v == nil {
			delete(fields, k)
			continue
		}
		fields[k] = v
	}
	return fields, nil
}

// isActive returns the new row's is_active: 0 when the scenario's active
// field (or its default) says false/0, else 1. A value ValidateFields would
// refuse never gets here.
func isActive(sc *mapping.Scenario, fields map[string]any) int {
	name := sc.Field(mapping.FieldActive)
	if name == "" {
		return task.RowActive
	}
	v, ok := fields[name]
	if !ok || v == nil || v == "" {
		v = sc.Config().Defaults[name]
	}
	switch x := v.(type) {
	case bool:
		if !x {
			return task.RowInactive
		}
	case string:
		if s := strings.ToLower(strings.TrimSpace(x)); s == "0" || s == "false" {
			return task.RowInactive
		}
	case json.Number:
		if f, err := x.Float64(); err == nil && f == 0 {
			return task.RowInactive
		}
	case int:
		if x == 0 {
			return task.RowInactive
		}
	case float64:
		if x == 0 {
			return task.RowInactive
		}
	}
	return task.RowActive
}
