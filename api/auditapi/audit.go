// Package auditapi serves the audit trail: one row's records
// (GET /api/v1/scenarios/:scenario/rows/:id/audit) and the whole trail,
// filtered (GET /api/v1/audit), newest first. The handlers that change
// things write the records (httpapi.RecordChange, and webtable for rows).
//
// Its handlers hold only the small Store interface declared here. It
// imports mapping, store (for the record types) and httpapi, never a
// store driver, patrol, fire, executors, jobs or server.
package auditapi

import (
	"context"
	"log/slog"
	"maps"
	"net/http"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// Store is the part of the audit log the API reads (store.AuditLog).
type Store interface {
	ListAudit(ctx context.Context, scenario, rowID string, beforeID int64, limit int) ([]*store.AuditRecord, error)
	QueryAudit(ctx context.Context, q store.AuditQuery) ([]*store.AuditRecord, error)
	// TaskGetter reads the titles of the tasks and jobs a page changed.
	httpapi.TaskGetter
}

// Every store the server accepts satisfies Store.
var _ Store = store.Product(nil)

// API serves the audit trail; build it with New and mount it with
// Register.
type API struct {
	httpapi.Base
	store     Store
	scenarios map[string]*mapping.Scenario
}

// New returns the audit API over st for the scenarios (a row's trail is
// read only in a configured scenario); logger receives the 500s (nil
// discards them). It panics when st is nil, a wiring bug.
func New(logger *slog.Logger, st Store, scenarios map[string]*mapping.Scenario) *API {
	return &API{Base: httpapi.NewBase("auditapi", logger, nil, nil), store: httpapi.Require("auditapi", "Store", st),
		scenarios: maps.Clone(scenarios)}
}

// Register mounts the routes on r:
//
//	GET /api/v1/scenarios/:scenario/rows/:id/audit, GET /api/v1/audit
func (a *API) Register(r gin.IRouter) {
	r.GET("/api/v1/scenarios/:scenario/rows/:id/audit", a.listAudit)
	r.GET("/api/v1/audit", a.queryAudit)
}

// scenario returns the path's scenario, or an error for WriteError.
func (a *API) scenario(name string) (*mapping.Scenario, error) {
	sc, ok := a.scenarios[name]
	if !ok || sc == nil {
		return nil, httpapi.UnknownScenario(name)
	}
	return sc, nil
}

// auditPage is the answer of GET .../rows/:id/audit and GET /api/v1/audit.
type auditPage struct {
	Records []recordView `json:"records"`
	// NextBefore is the `before` of the next page, 0 on the last page.
	NextBefore int64 `json:"next_before"`
}

// listAudit handles GET /api/v1/scenarios/:scenario/rows/:id/audit?before=&limit=:
// the row's audit records, newest first.
func (a *API) listAudit(c *gin.Context) {
	sc, err := a.scenario(c.Param("scenario"))
	if err != nil {
		a.WriteError(c, err)
		return
	}
	before, err := httpapi.IntQuery(c, "before", 0, 0, 1<<62)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	limit, err := httpapi.IntQuery(c, "limit", httpapi.DefaultLimit, 1, httpapi.MaxLimit)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	// One extra record tells whether another page follows.
	n := min(limit+1, store.MaxAuditPage)
	recs, err := a.store.ListAudit(c.Request.Context(), sc.Name(), c.Param("id"), int64(before), n)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	var page auditPage
	if len(recs) > limit || (len(recs) == limit && n == limit) {
		recs, page.NextBefore = recs[:limit], recs[limit-1].ID
	}
	a.answer(c, recs, page)
}

// queryAudit handles GET /api/v1/audit?kind=&id=&who=&action=&before=&limit=:
// the whole audit trail, newest first, filtered. kind is a scenario (row
// edits) or one of @target, @task, @job, @run, @user, @token.
func (a *API) queryAudit(c *gin.Context) {
	var q store.AuditQuery
	for _, f := range []struct {
		name string
		to   *string
	}{{"kind", &q.Scenario}, {"id", &q.RowID}, {"who", &q.Who}, {"action", &q.Action}} {
		v, err := httpapi.StringQuery(c, f.name)
		if err != nil {
			a.WriteError(c, err)
			return
		}
		*f.to = v
	}
	before, err := httpapi.IntQuery(c, "before", 0, 0, 1<<62)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	limit, err := httpapi.IntQuery(c, "limit", httpapi.DefaultLimit, 1, httpapi.MaxLimit)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	q.BeforeID, q.Limit = int64(before), min(limit+1, store.MaxAuditPage)
	recs, err := a.store.QueryAudit(c.Request.Context(), q)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	redactTargets(recs)
	var page auditPage
	if len(recs) > limit || (len(recs) == limit && q.Limit == limit) {
		recs, page.NextBefore = recs[:limit], recs[limit-1].ID
	}
	a.answer(c, recs, page)
}

// answer writes page with recs, titled, as its records.
func (a *API) answer(c *gin.Context, recs []*store.AuditRecord, page auditPage) {
	views, err := a.withTitles(c.Request.Context(), recs)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	page.Records = views
	c.JSON(http.StatusOK, page)
}

// redactTargets masks the URL secrets of target records (task.RedactURL)
// whatever the stored record holds, so the trail never shows a secret.
func redactTargets(recs []*store.AuditRecord) {
	for _, r := range recs {
		if r.Scenario != store.AuditKindTarget {
			continue
		}
		for _, m := range []map[string]any{r.Old, r.New} {
			if u, ok := m["url"].(string); ok {
				m["url"] = task.RedactURL(u)
			}
		}
	}
}
