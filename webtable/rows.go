package webtable

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// maxBodyBytes bounds every request body.
const maxBodyBytes = 256 << 10

// versionKey is the body key that may carry the If-Match version of a PATCH;
// it is never stored.
const versionKey = "_version"

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
		a.writeError(c, err)
		return
	}
	fields, err := readObject(c)
	if err != nil {
		a.writeError(c, err)
		return
	}
	delete(fields, versionKey)
	id, err := sc.AssignID(fields)
	if err != nil {
		a.writeError(c, err)
		return
	}
	if err := sc.ValidateFields(fields); err != nil {
		a.writeError(c, err)
		return
	}
	row := &task.Row{
		Scenario: sc.Name(),
		ID:       id,
		Fields:   fields,
		IsActive: isActive(sc, fields),
	}
	ctx := c.Request.Context()
	if err := a.store.InsertRow(ctx, row); err != nil {
		a.writeError(c, describeAs(err, task.ErrConflict, task.CodeAlreadyExists, "row %q already exists in scenario %q", id, sc.Name()))
		return
	}
	a.wake()
	saved, err := a.store.GetRow(ctx, sc.Name(), id)
	if err != nil {
		a.writeError(c, describe(err, task.ErrNotFound, "row %q was deleted right after it was created", id))
		return
	}
	a.record(ctx, who(c), sc.Name(), id, store.AuditCreate, nil, saved.Fields)
	c.Header("Location", strings.TrimSuffix(c.Request.URL.Path, "/")+"/"+url.PathEscape(id))
	writeRow(c, http.StatusCreated, saved)
}

// getRow handles GET /api/v1/scenarios/:scenario/rows/:id.
func (a *API) getRow(c *gin.Context) {
	sc, err := a.scenario(c.Param("scenario"))
	if err != nil {
		a.writeError(c, err)
		return
	}
	id := c.Param("id")
	row, err := a.store.GetRow(c.Request.Context(), sc.Name(), id)
	if err != nil {
		a.writeError(c, describe(err, task.ErrNotFound, "row %q not found in scenario %q", id, sc.Name()))
		return
	}
	writeRow(c, http.StatusOK, row)
}

// listRows handles GET /api/v1/scenarios/:scenario/rows?after=&limit=.
func (a *API) listRows(c *gin.Context) {
	sc, err := a.scenario(c.Param("scenario"))
	if err != nil {
		a.writeError(c, err)
		return
	}
	after, err := stringQuery(c, "after")
	if err != nil {
		a.writeError(c, err)
		return
	}
	limit, err := intQuery(c, "limit", defaultLimit, 1, maxLimit)
	if err != nil {
		a.writeError(c, err)
		return
	}
	// One extra row tells whether another page follows.
	rows, err := a.store.ListRows(c.Request.Context(), sc.Name(), after, limit+1)
	if err != nil {
		a.writeError(c, err)
		return
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

// patchRow handles PATCH /api/v1/scenarios/:scenario/rows/:id: the body's
// fields are merged onto the stored ones (null removes a field), the result
// is validated and saved if the row still has the version the edit was
// based on.
func (a *API) patchRow(c *gin.Context) {
	sc, err := a.scenario(c.Param("scenario"))
	if err != nil {
		a.writeError(c, err)
		return
	}
	id := c.Param("id")
	patch, err := readObject(c)
	if err != nil {
		a.writeError(c, err)
		return
	}
	want, err := ifMatch(c.GetHeader("If-Match"), patch)
	if err != nil {
		a.writeError(c, err)
		return
	}
	ctx := c.Request.Context()
	cur, err := a.store.GetRow(ctx, sc.Name(), id)
	if err != nil {
		a.writeError(c, describe(err, task.ErrNotFound, "row %q not found in scenario %q", id, sc.Name()))
		return
	}
	if want > 0 && want != cur.Version {
		a.writeError(c, task.VersionConflict(fmt.Sprintf("row %q", id), cur.Version, want))
		return
	}
	fields, err := merge(sc, cur, patch)
	if err != nil {
		a.writeError(c, err)
		return
	}
	if err := sc.ValidateFields(fields); err != nil {
		a.writeError(c, err)
		return
	}
	row, err := a.store.UpdateRowFields(ctx, store.UpdateRowParams{
		Scenario:  sc.Name(),
		ID:        id,
		Fields:    fields,
		IfVersion: cur.Version, // also guards the read-merge-write against a concurrent edit
	})
	if err != nil {
		err = describe(err, task.ErrNotFound, "row %q was deleted while saving", id)
		err = describeAs(err, task.ErrConflict, task.CodeVersionConflict, "row %q changed while your edit was saved "+
			"(you sent version %d); reload and try again", id, cur.Version)
		a.writeError(c, err)
		return
	}
	a.wake()
	a.record(ctx, who(c), sc.Name(), id, store.AuditUpdate, cur.Fields, row.Fields)
	writeRow(c, http.StatusOK, row)
}

// deleteRow handles DELETE /api/v1/scenarios/:scenario/rows/:id.
func (a *API) deleteRow(c *gin.Context) {
	sc, err := a.scenario(c.Param("scenario"))
	if err != nil {
		a.writeError(c, err)
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
	if err := a.store.DeleteRow(ctx, sc.Name(), id); err != nil {
		a.writeError(c, describe(err, task.ErrNotFound, "row %q not found in scenario %q", id, sc.Name()))
		return
	}
	a.wake()
	a.record(ctx, who(c), sc.Name(), id, store.AuditDelete, old, nil)
	c.Status(http.StatusNoContent)
}

// writeRow answers with row and its version as ETag, for If-Match.
func writeRow(c *gin.Context, status int, row *task.Row) {
	c.Header("ETag", strconv.Quote(strconv.FormatInt(row.Version, 10)))
	c.JSON(status, row)
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

// ifMatch returns the version a PATCH is based on, from the If-Match header
// or the body's _version key (removed from patch); 0 when neither is given.
func ifMatch(header string, patch map[string]any) (int64, error) {
	var fromHeader, fromBody int64
	if header != "" && strings.TrimSpace(header) != "*" {
		v, err := parseVersion(header)
		if err != nil {
			return 0, httpErr(http.StatusBadRequest, "If-Match", "If-Match: %v", err)
		}
		fromHeader = v
	}
	if raw, ok := patch[versionKey]; ok {
		delete(patch, versionKey)
		if raw != nil {
			v, err := parseVersion(fmt.Sprint(raw))
			if err != nil {
				return 0, task.Invalid(versionKey, "%v", err)
			}
			fromBody = v
		}
	}
	if fromHeader > 0 && fromBody > 0 && fromHeader != fromBody {
		return 0, task.Invalid(versionKey, "is %d but If-Match says %d", fromBody, fromHeader)
	}
	return max(fromHeader, fromBody), nil
}

// parseVersion reads a row's or a target's version: 3, "3" or W/"3".
func parseVersion(s string) (int64, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "W/")
	s = strings.TrimSuffix(strings.TrimPrefix(s, `"`), `"`)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 1 {
		return 0, errors.New("must be a version, a positive integer")
	}
	return v, nil
}

// readObject decodes the request body, at most maxBodyBytes, as one JSON
// object with numbers kept as json.Number.
func readObject(c *gin.Context) (map[string]any, error) {
	if err := limitBody(c, maxBodyBytes); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(c.Request.Body)
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, bodyError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("data after the JSON value")
		}
		return nil, bodyError(err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, httpErr(http.StatusBadRequest, "body", "body: must be a JSON object of fields")
	}
	return obj, nil
}

// bodyError turns a decoding error into a 413 or a 400.
func bodyError(err error) error {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return tooLarge(tooBig.Limit)
	case errors.Is(err, io.EOF):
		return httpErr(http.StatusBadRequest, "body", "body: invalid JSON: empty body")
	}
	return httpErr(http.StatusBadRequest, "body", "body: invalid JSON: %v", err)
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
