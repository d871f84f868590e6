package webtable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// batchEdit is one row of POST .../rows/batch: the fields to merge onto the
// row (as a PATCH: null removes a field) and the version the edit is based
// on (0: any).
type batchEdit struct {
	ID      string         `json:"id"`
	Version int64          `json:"version"`
	Fields  map[string]any `json:"fields"`
}

// batchRequest is the body of POST .../rows/batch.
type batchRequest struct {
	Rows []batchEdit `json:"rows"`
}

// batchRefusal is why one row of a refused batch was refused.
type batchRefusal struct {
	err    error     // the refusal, for a 5xx's log
	ID     string    `json:"id"`
	Status int       `json:"status"` // the status a PATCH of the row alone would have had
	Error  string    `json:"error"`
	Code   task.Code `json:"code"`
	Field  string    `json:"field,omitempty"`
}

// batchRefused is the answer to a batch of which nothing was saved.
type batchRefused struct {
	httpapi.ErrorBody
	Rows []batchRefusal `json:"rows"`
}

// batchSaved is the answer to a batch that was saved whole.
type batchSaved struct {
	Rows []*task.Row `json:"rows"`
}

// batchPlan is a validated edit: the edit, the row as read and its new
// fields.
type batchPlan struct {
	edit   batchEdit
	cur    *task.Row
	fields map[string]any
}

// batch handles POST /api/v1/scenarios/:scenario/rows/batch {rows: [{id,
// version, fields}, …]}: several rows' edits (a paste of a range) saved
// all or nothing. Every row is read, checked against its version, merged
// and validated before any is written; one refusal answers with each
// refused row's reason (its status, message and field) and nothing is
// saved. The rows are then written one by one, each on the version read.
// A row whose edit named version 0 ("any version") that another edit
// saved meanwhile is read, merged and checked again and written again, as
// a PATCH without If-Match is (up to patchAttempts times), so concurrent
// edits of different fields all land. A write that loses a race for an
// edit that named its version, or that runs out of attempts or is refused
// on the row as read again, puts the rows already written back as they
// were (each put-back audited too) and answers 409 (or the refusal). Each
// change is audited as an update. Validation is the PATCH's plus what the
// sync patrol checks of an edited field (a schedule that does not parse,
// an unknown channel …), so a paste never saves rows that will fail to sync.
func (a *API) batch(c *gin.Context) {
	sc, err := a.scenario(c.Param("scenario"))
	if err != nil {
		a.WriteError(c, err)
		return
	}
	req, err := readBatch(c)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	targets := a.newTargetCheck()
	defer targets.release(c.Request.Context())
	plans, refused := a.planBatch(c, sc, req.Rows, targets)
	if len(refused) > 0 {
		a.refuseBatch(c, len(req.Rows), refused)
		return
	}
	ctx := c.Request.Context()
	user := httpapi.Who(c)
	saved := make([]*task.Row, 0, len(plans))
	for i := range plans {
		row, err := a.saveEdit(c, sc, &plans[i])
		if err != nil {
			a.undoBatch(c, sc, plans[:len(saved)], saved, user)
			a.WriteError(c, err)
			return
		}
		a.record(ctx, user, sc.Name(), row.ID, store.AuditUpdate, plans[i].cur.Fields, row.Fields)
		saved = append(saved, row)
	}
	for _, r := range saved {
		a.switchOff(ctx, sc, r)
	}
	a.wake()
	for _, r := range saved {
		hideIdleNextFire(sc, r, nil)
	}
	c.JSON(http.StatusOK, batchSaved{Rows: saved})
}

// readBatch decodes and bounds the body of POST .../rows/batch.
func readBatch(c *gin.Context) (batchRequest, error) {
	var req batchRequest
	obj, err := httpapi.ReadObject(c)
	if err != nil {
		return req, err
	}
	raw, _ := json.Marshal(obj)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		return req, task.Invalid("rows", "must be a list of {id, version, fields}")
	}
	switch {
	case len(req.Rows) == 0:
		return req, task.Invalid("rows", "list at least one row")
	case len(req.Rows) > maxBulkIDs:
		return req, task.Invalid("rows", "lists %d rows; at most %d", len(req.Rows), maxBulkIDs)
	}
	seen := make(map[string]bool, len(req.Rows))
	for i, r := range req.Rows {
		if r.ID == "" || len(r.ID) > httpapi.MaxQueryLen {
			return req, task.Invalid("rows", "row %d: the id is empty or longer than %d bytes", i+1, httpapi.MaxQueryLen)
		}
		if seen[r.ID] {
			return req, task.Invalid("rows", "row %q is listed twice; merge its fields into one entry", r.ID)
		}
		seen[r.ID] = true
		if len(r.Fields) == 0 {
			return req, task.Invalid("rows", "row %q: fields is empty", r.ID)
		}
		delete(r.Fields, httpapi.VersionKey)
	}
	return req, nil
}

// planBatch reads, merges and validates every edit; it returns the plans
// when none is refused, else the refusals.
func (a *API) planBatch(c *gin.Context, sc *mapping.Scenario, edits []batchEdit, targets *targetCheck) ([]batchPlan, []batchRefusal) {
	ctx := c.Request.Context()
	now := a.Now()
	plans := make([]batchPlan, 0, len(edits))
	var refused []batchRefusal
	refuse := func(id string, err error) {
		status, body := httpapi.Classify(err)
		refused = append(refused, batchRefusal{err: err, ID: id, Status: status, Error: body.Error, Code: body.Code, Field: body.Field})
	}
	for _, e := range edits {
		p, err := a.planEdit(ctx, sc, e, targets, now)
		if err != nil {
			refuse(e.ID, err)
			continue
		}
		plans = append(plans, p)
	}
	return plans, refused
}

// planEdit reads the row e edits, checks e's version, merges and
// validates e's fields.
func (a *API) planEdit(ctx context.Context, sc *mapping.Scenario, e batchEdit, targets *targetCheck,
	now time.Time) (batchPlan, error) {
	cur, err := a.store.GetRow(ctx, sc.Name(), e.ID)
	if err != nil {
		return batchPlan{}, httpapi.Describe(err, task.ErrNotFound, "row %q not found in scenario %q", e.ID, sc.Name())
	}
	if e.Version > 0 && e.Version != cur.Version {
		return batchPlan{}, task.VersionConflict(fmt.Sprintf("row %q", e.ID), cur.Version, e.Version)
	}
	fields, err := merge(sc, cur, e.Fields)
	if err == nil {
		err = sc.ValidateFields(fields)
	}
	if err == nil {
		err = syncRefusal(sc, cur, fields, e.Fields, now)
	}
	if err == nil {
		err = targets.check(ctx, sc, fields, cur.Fields)
	}
	if err != nil {
		return batchPlan{}, err
	}
	return batchPlan{edit: e, cur: cur, fields: fields}, nil
}

// saveEdit writes p on the version it read. When another edit saved the
// row meanwhile and p's edit named version 0, p is planned again on the
// row as it is now and written again, up to patchAttempts times; p then
// holds the plan that was written.
func (a *API) saveEdit(c *gin.Context, sc *mapping.Scenario, p *batchPlan) (*task.Row, error) {
	ctx := c.Request.Context()
	defer a.edits.lock(sc.Name(), p.cur.ID)()
	for attempt := 1; ; attempt++ {
		row, err := a.store.UpdateRowFields(ctx, store.UpdateRowParams{
			Scenario: sc.Name(), ID: p.cur.ID, Fields: p.fields, IfVersion: p.cur.Version,
		})
		if err == nil {
			return row, nil
		}
		if p.edit.Version == 0 && errors.Is(err, task.ErrConflict) && attempt < patchAttempts {
			raceWait(ctx, attempt+1)
			again, perr := a.planEdit(ctx, sc, p.edit, a.newTargetCheck(), a.Now())
			if perr == nil {
				*p = again
				continue
			}
			err = perr
		}
		err = httpapi.Describe(err, task.ErrNotFound, "row %q was deleted while the batch was saved; nothing was saved", p.cur.ID)
		return nil, httpapi.DescribeAs(err, task.ErrConflict, task.CodeVersionConflict,
			"row %q changed while the batch was saved; nothing was saved, reload and try again", p.cur.ID)
	}
}

// syncRefusal is the error the sync patrol would find in the row with
// fields (mapping.Scenario.ToTask, as an import checks its lines), when it
// names one of the edited fields: a batch may not break a row, but a row
// already invalid for another field may still be edited (as by a PATCH).
func syncRefusal(sc *mapping.Scenario, cur *task.Row, fields, edited map[string]any, now time.Time) error {
	_, err := sc.ToTask(&task.Row{Scenario: sc.Name(), ID: cur.ID, Fields: fields, IsActive: isActive(sc, fields)}, now)
	var ve *task.ValidationError
	if err == nil || !errors.As(err, &ve) {
		return err
	}
	if _, ok := edited[ve.Field]; ok {
		return err
	}
	return nil
}

// refuseBatch answers a batch that was refused: the status of the first
// refusal, with every refusal; a row that could not be read (a 5xx) is
// answered (and logged) as any other request's 5xx.
func (a *API) refuseBatch(c *gin.Context, total int, refused []batchRefusal) {
	for _, r := range refused {
		if r.Status >= http.StatusInternalServerError {
			a.WriteError(c, fmt.Errorf("batch edit of row %q: %w", r.ID, r.err))
			return
		}
	}
	status := refused[0].Status
	body := batchRefused{ErrorBody: httpapi.ErrorBody{
		Error: strconv.Itoa(len(refused)) + " of " + strconv.Itoa(total) + " rows refused; nothing was saved: " +
			refused[0].ID + ": " + refused[0].Error,
		Code: refused[0].Code, Field: refused[0].Field,
	}, Rows: refused}
	c.AbortWithStatusJSON(status, body)
}

// undoBatch puts the rows a batch already wrote back as they were read
// (plans[i] is saved[i]'s plan), each on the version it was written with.
// A row edited again meanwhile is left as that edit made it (logged).
func (a *API) undoBatch(c *gin.Context, sc *mapping.Scenario, plans []batchPlan, saved []*task.Row, user string) {
	ctx := c.Request.Context()
	for i, row := range saved {
		back, err := a.store.UpdateRowFields(ctx, store.UpdateRowParams{
			Scenario: sc.Name(), ID: row.ID, Fields: plans[i].cur.Fields, IfVersion: row.Version,
		})
		if err != nil {
			a.Logger().ErrorContext(ctx, "batch edit not put back", "scenario", sc.Name(), "row", row.ID, "error", err)
			continue
		}
		a.record(ctx, user, sc.Name(), row.ID, store.AuditUpdate, row.Fields, back.Fields)
	}
	if len(saved) > 0 {
		a.wake()
	}
}
