package httpapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/store"
)

// RecordDelete writes the audit record of the deletion of an object that
// is not a row (kind is one of store.AuditKind…), by the request's author:
// action delete, old the summary of what was deleted (never a secret),
// new empty. A nil log records nothing; a failure is logged, the deletion
// being made already.
func RecordDelete(c *gin.Context, logger *slog.Logger, log store.AuditLog, now time.Time, kind, id string, old map[string]any) {
	if log == nil {
		return
	}
	ctx := c.Request.Context()
	user := Who(c)
	rec := &store.AuditRecord{Scenario: kind, RowID: CutUTF8(id, 200), Action: store.AuditDelete, Who: user, At: now, Old: old}
	if err := log.AddAudit(context.WithoutCancel(ctx), rec); err != nil {
		logger.ErrorContext(ctx, "audit record lost", "kind", kind, "id", id, "action", store.AuditDelete, "who", user, "error", err)
	}
}

// RecordDelete is RecordDelete over the handler set's logger, audit log
// and clock.
func (b Base) RecordDelete(c *gin.Context, kind, id string, old map[string]any) {
	RecordDelete(c, b.logger, b.audit, b.now(), kind, id, old)
}
