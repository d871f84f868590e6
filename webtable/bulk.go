package webtable

import (
	"encoding/json"
	"maps"
	"net/http"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// maxBulkIDs bounds the ids of one bulk action.
const maxBulkIDs = 500

// bulkRequest is the body of POST .../rows/bulk.
type bulkRequest struct {
	Action string   `json:"action"`
	IDs    []string `json:"ids"`
}

// bulkResult is what happened to one id.
type bulkResult struct {
	ID     string `json:"id"`
	Status int    `json:"status"` // the status a single-row request would have had
	Error  string `json:"error,omitempty"`
}

// bulkAnswer is the answer of POST .../rows/bulk.
type bulkAnswer struct {
	Action  string       `json:"action"`
	OK      int          `json:"ok"`
	Failed  int          `json:"failed"`
	Results []bulkResult `json:"results"`
}

// bulk handles POST /api/v1/scenarios/:scenario/rows/bulk
// {action: activate|deactivate|delete, ids: [...]}: the action is applied
// to each row on its own (one failure does not stop the others) and the
// answer, 200, reports each id's outcome. Activate and deactivate set the
// scenario's active field to 1 or 0 (a row already so is left alone). Each
// change is audited.
func (a *API) bulk(c *gin.Context) {
	sc, err := a.scenario(c.Param("scenario"))
	if err != nil {
		a.WriteError(c, err)
		return
	}
	req, activeField, flag, err := readBulkRequest(c, sc)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	ctx := c.Request.Context()
	user := httpapi.Who(c)
	ans := bulkAnswer{Action: req.Action, Results: make([]bulkResult, 0, len(req.IDs))}
	done := make(map[string]bool, len(req.IDs))
	changed := false
	for _, id := range req.IDs {
		if done[id] {
			continue // named twice: acted on once
		}
		done[id] = true
		var err error
		if req.Action == store.AuditDelete {
			err = a.bulkDelete(c, sc, id, user)
		} else {
			err = a.bulkActive(c, sc, activeField, id, flag, req.Action, user)
		}
		if err == nil {
			changed = true
			ans.OK++
			ans.Results = append(ans.Results, bulkResult{ID: id, Status: http.StatusOK})
			continue
		}
		if ctx.Err() != nil {
			a.WriteError(c, ctx.Err())
			return
		}
		status, body := httpapi.Classify(err)
		if status >= http.StatusInternalServerError {
			a.Logger().ErrorContext(ctx, "bulk action failed", "scenario", sc.Name(), "row", id,
				"action", req.Action, "error", err)
		}
		ans.Failed++
		ans.Results = append(ans.Results, bulkResult{ID: id, Status: status, Error: body.Error})
	}
	if changed {
		a.wake()
	}
	c.JSON(http.StatusOK, ans)
}

// readBulkRequest reads and checks the body of a bulk action on sc. For
// activate and deactivate it returns the scenario's active field and the
// value the action sets it to (1 or 0).
func readBulkRequest(c *gin.Context, sc *mapping.Scenario) (req bulkRequest, activeField string, flag int, err error) {
	obj, err := httpapi.ReadObject(c)
	if err != nil {
		return req, "", 0, err
	}
	raw, _ := json.Marshal(obj)
	if err := json.Unmarshal(raw, &req); err != nil {
		return req, "", 0, task.Invalid("ids", "must be a list of row ids")
	}
	switch req.Action {
	case store.AuditActivate:
		flag = 1
	case store.AuditDeactivate:
	case store.AuditDelete:
	default:
		return req, "", 0, task.Invalid("action", "must be activate, deactivate or delete")
	}
	activeField = sc.Field(mapping.FieldActive)
	if req.Action != store.AuditDelete && activeField == "" {
		return req, "", 0, task.Invalid("action", "scenario %q has no active field", sc.Name())
	}
	switch {
	case len(req.IDs) == 0:
		return req, "", 0, task.Invalid("ids", "list at least one row id")
	case len(req.IDs) > maxBulkIDs:
		return req, "", 0, task.Invalid("ids", "lists %d ids; at most %d", len(req.IDs), maxBulkIDs)
	}
	for _, id := range req.IDs {
		if id == "" || len(id) > httpapi.MaxQueryLen {
			return req, "", 0, task.Invalid("ids", "an id is empty or longer than %d bytes", httpapi.MaxQueryLen)
		}
	}
	return req, activeField, flag, nil
}

// bulkDelete deletes one row and audits it.
func (a *API) bulkDelete(c *gin.Context, sc *mapping.Scenario, id, user string) error {
	ctx := c.Request.Context()
	cur, err := a.store.GetRow(ctx, sc.Name(), id)
	if err != nil {
		return httpapi.Describe(err, task.ErrNotFound, "row %q not found", id)
	}
	if err := a.store.DeleteRow(ctx, sc.Name(), id); err != nil {
		return httpapi.Describe(err, task.ErrNotFound, "row %q not found", id)
	}
	a.record(ctx, user, sc.Name(), id, store.AuditDelete, cur.Fields, nil)
	return nil
}

// bulkActive sets one row's active field to flag and audits it.
func (a *API) bulkActive(c *gin.Context, sc *mapping.Scenario, field, id string, flag int, action, user string) error {
	ctx := c.Request.Context()
	cur, err := a.store.GetRow(ctx, sc.Name(), id)
	if err != nil {
		return httpapi.Describe(err, task.ErrNotFound, "row %q not found", id)
	}
	fields := maps.Clone(cur.Fields)
	if fields == nil {
		fields = map[string]any{}
	}
	if isActive(sc, fields) == flag {
		return nil // already so
	}
	fields[field] = flag
	if err := sc.ValidateFields(fields); err != nil {
		return err
	}
	row, err := a.store.UpdateRowFields(ctx, store.UpdateRowParams{
		Scenario: sc.Name(), ID: id, Fields: fields, IfVersion: cur.Version,
	})
	if err != nil {
		err = httpapi.Describe(err, task.ErrNotFound, "row %q was deleted while saving", id)
		return httpapi.DescribeAs(err, task.ErrConflict, task.CodeVersionConflict, "row %q changed while your edit was saved; try again", id)
	}
	a.switchOff(ctx, sc, row)
	a.record(ctx, user, sc.Name(), id, action, cur.Fields, row.Fields)
	return nil
}
