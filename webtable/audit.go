package webtable

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"cronsheet/store"
	"cronsheet/task"
)

// userHeader names who makes a request, for the audit trail; without it
// the client's IP address stands in.
const userHeader = "X-Cronsheet-User"

// auditPage is the answer of GET .../rows/:id/audit.
type auditPage struct {
	Records []*store.AuditRecord `json:"records"`
	// NextBefore is the `before` of the next page, 0 on the last page.
	NextBefore int64 `json:"next_before"`
}

// who is the request's author, at most store.MaxAuditWho bytes: the
// signed-in principal the Guard found (a user, or a user's token); an API
// mounted without the guard (tests, embedding) falls back to the
// X-Cronsheet-User header (control characters dropped), else the client IP.
func who(c *gin.Context) string {
	if p := PrincipalOf(c); p != nil {
		return cutUTF8(p.Who(), store.MaxAuditWho)
	}
	u := strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, c.GetHeader(userHeader)))
	if u == "" {
		u = c.ClientIP()
	}
	return cutUTF8(u, store.MaxAuditWho)
}

// record writes one audit record. The edit is already saved, so a failure
// is logged rather than answered.
func (a *API) record(ctx context.Context, user, scenario, rowID, action string, old, neu map[string]any) {
	rec := &store.AuditRecord{Scenario: scenario, RowID: rowID, Action: action, Who: user,
		At: a.now(), Old: maps.Clone(old), New: maps.Clone(neu)}
	if err := a.audit.AddAudit(context.WithoutCancel(ctx), rec); err != nil {
		a.logger.ErrorContext(ctx, "audit record lost", "scenario", scenario, "row", rowID,
			"action", action, "who", user, "error", err)
	}
}

// recordChange writes the audit record of a change to an object that is
// not a row (kind is one of store.AuditKind…), with a summary of its new
// state (never a secret: no header values, bodies or hashes).
func (a *API) recordChange(c *gin.Context, kind, id, action string, neu map[string]any) {
	recordChange(c, a.logger, a.audit, a.now(), kind, id, action, neu)
}

// recordChange is API.recordChange for the guard too: a nil log records
// nothing; a failure is logged, the change being made already.
func recordChange(c *gin.Context, logger *slog.Logger, log store.AuditLog, now time.Time, kind, id, action string, neu map[string]any) {
	if log == nil {
		return
	}
	ctx := c.Request.Context()
	user := who(c)
	rec := &store.AuditRecord{Scenario: kind, RowID: cutUTF8(id, 200), Action: action, Who: user, At: now, New: neu}
	if err := log.AddAudit(context.WithoutCancel(ctx), rec); err != nil {
		logger.ErrorContext(ctx, "audit record lost", "kind", kind, "id", id, "action", action, "who", user, "error", err)
	}
}

// targetSummary is what the audit trail keeps of a target: no headers or
// body, which may hold credentials.
func targetSummary(t *task.Target) map[string]any {
	m := map[string]any{"name": t.Name, "kind": string(t.Kind), "state": string(t.State), "version": t.Version}
	switch {
	case t.HTTP != nil:
		m["url"] = t.HTTP.URL
	case t.Exec != nil:
		m["command"] = t.Exec.Command
	case t.Kafka != nil:
		m["topic"] = t.Kafka.Topic
	}
	return m
}

// listAudit handles GET /api/v1/scenarios/:scenario/rows/:id/audit?before=&limit=:
// the row's audit records, newest first.
func (a *API) listAudit(c *gin.Context) {
	sc, err := a.scenario(c.Param("scenario"))
	if err != nil {
		a.writeError(c, err)
		return
	}
	before, err := intQuery(c, "before", 0, 0, 1<<62)
	if err != nil {
		a.writeError(c, err)
		return
	}
	limit, err := intQuery(c, "limit", defaultLimit, 1, maxLimit)
	if err != nil {
		a.writeError(c, err)
		return
	}
	// One extra record tells whether another page follows.
	n := min(limit+1, store.MaxAuditPage)
	recs, err := a.audit.ListAudit(c.Request.Context(), sc.Name(), c.Param("id"), int64(before), n)
	if err != nil {
		a.writeError(c, err)
		return
	}
	page := auditPage{Records: recs}
	if len(recs) > limit {
		page.Records = recs[:limit]
	}
	if len(recs) > limit || (len(recs) == limit && n == limit) {
		page.NextBefore = recs[limit-1].ID
	}
	if page.Records == nil {
		page.Records = []*store.AuditRecord{}
	}
	c.JSON(http.StatusOK, page)
}

// queryAudit handles GET /api/v1/audit?kind=&id=&who=&action=&before=&limit=:
// the whole audit trail, newest first, filtered. kind is a scenario (row
// edits) or one of @target, @task, @job, @run, @user, @token.
func (a *API) queryAudit(c *gin.Context) {
	if a.audit == nil {
		c.AbortWithStatusJSON(http.StatusNotImplemented, statusBody(http.StatusNotImplemented, "this store keeps no audit trail"))
		return
	}
	var q store.AuditQuery
	for _, f := range []struct {
		name string
		to   *string
	}{{"kind", &q.Scenario}, {"id", &q.RowID}, {"who", &q.Who}, {"action", &q.Action}} {
		v, err := stringQuery(c, f.name)
		if err != nil {
			a.writeError(c, err)
			return
		}
		*f.to = v
	}
	before, err := intQuery(c, "before", 0, 0, 1<<62)
	if err != nil {
		a.writeError(c, err)
		return
	}
	limit, err := intQuery(c, "limit", defaultLimit, 1, maxLimit)
	if err != nil {
		a.writeError(c, err)
		return
	}
	q.BeforeID, q.Limit = int64(before), min(limit+1, store.MaxAuditPage)
	recs, err := a.audit.QueryAudit(c.Request.Context(), q)
	if err != nil {
		a.writeError(c, err)
		return
	}
	page := auditPage{Records: recs}
	if len(recs) > limit || (len(recs) == limit && q.Limit == limit) {
		page.Records, page.NextBefore = recs[:limit], recs[limit-1].ID
	}
	if page.Records == nil {
		page.Records = []*store.AuditRecord{}
	}
	c.JSON(http.StatusOK, page)
}

// cutUTF8 cuts s to at most n bytes, on a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
