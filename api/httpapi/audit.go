package httpapi

import (
	"context"
	"log/slog"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"cronsheet/store"
)

// userHeader names who makes a request, for the audit trail; without it
// the client's IP address stands in.
const userHeader = "X-Cronsheet-User"

// Who is the request's author, at most store.MaxAuditWho bytes: the
// signed-in principal the guard found (a user, or a user's token); an API
// mounted without the guard (tests, embedding) falls back to the
// X-Cronsheet-User header (control characters dropped), else the client IP.
func Who(c *gin.Context) string {
	if p := PrincipalOf(c); p != nil {
		return CutUTF8(p.Who(), store.MaxAuditWho)
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
	return CutUTF8(u, store.MaxAuditWho)
}

// RecordChange writes the audit record of a change to an object that is
// not a row (kind is one of store.AuditKind…), by the request's author,
// with a summary of its new state (never a secret: no header values,
// bodies or hashes). A nil log records nothing; a failure is logged, the
// change being made already.
func RecordChange(c *gin.Context, logger *slog.Logger, log store.AuditLog, now time.Time, kind, id, action string, neu map[string]any) {
	if log == nil {
		return
	}
	ctx := c.Request.Context()
	user := Who(c)
	rec := &store.AuditRecord{Scenario: kind, RowID: CutUTF8(id, 200), Action: action, Who: user, At: now, New: neu}
	if err := log.AddAudit(context.WithoutCancel(ctx), rec); err != nil {
		logger.ErrorContext(ctx, "audit record lost", "kind", kind, "id", id, "action", action, "who", user, "error", err)
	}
}

// CutUTF8 cuts s to at most n bytes, on a character boundary.
func CutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
