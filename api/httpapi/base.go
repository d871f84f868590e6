package httpapi

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/store"
)

// Base is what every handler set of the REST API holds besides its own
// store and callbacks: its component's logger, the audit log its changes
// go to and the clock. A handler set embeds the Base that NewBase built,
// answers errors with WriteError and audits changes with RecordChange, so
// that every package logs, answers and audits alike.
type Base struct {
	logger *slog.Logger
	audit  store.AuditLog
	now    func() time.Time
}

// NewBase returns the Base of component, the name its log records carry:
// logger receives the 500s (nil discards them), audit records every
// change (nil records nothing) and now is the clock (nil = time.Now).
func NewBase(component string, logger *slog.Logger, audit store.AuditLog, now func() time.Time) Base {
	if now == nil {
		now = time.Now
	}
	return Base{logger: componentLogger(logger, component), audit: audit, now: now}
}

// Logger returns the component's logger.
func (b Base) Logger() *slog.Logger { return b.logger }

// Now returns the time on the Base's clock.
func (b Base) Now() time.Time { return b.now() }

// WriteError answers c with err mapped to a status (the function
// WriteError), logging the 500s on the component's logger.
func (b Base) WriteError(c *gin.Context, err error) { WriteError(b.logger, c, err) }

// RecordChange writes the audit record of a change to object id of kind
// (the function RecordChange) at the Base's time.
func (b Base) RecordChange(c *gin.Context, kind, id, action string, neu map[string]any) {
	RecordChange(c, b.logger, b.audit, b.now(), kind, id, action, neu)
}

// Require returns dep, an interface value, panicking when it is nil: a
// handler set built without a dependency it needs is a wiring bug. The
// panic names the component and the dependency (name, such as
// "Deps.Store").
func Require[T any](component, name string, dep T) T {
	if any(dep) == nil {
		panic(fmt.Sprintf("%s: %s is nil", component, name))
	}
	return dep
}
