package store

import (
	"context"
	"time"
)

// AuditLog keeps the audit trail of changes made through the API: who
// changed which row (or target, task state, job, user or token: see the
// AuditKind… kinds), when, how, and the values before and after. It is
// separate from Store so that a driver can offer it (or not) without
// changing Store; the API writes it when its store implements it.
type AuditLog interface {
	// AddAudit appends rec, setting rec.ID. rec.At is kept to the
	// millisecond.
	AddAudit(ctx context.Context, rec *AuditRecord) error
	// ListAudit returns a row's records newest first, those with ID <
	// beforeID (0 = from the newest), at most limit (1..MaxAuditPage, else
	// task.ErrInvalid).
	ListAudit(ctx context.Context, scenario, rowID string, beforeID int64, limit int) ([]*AuditRecord, error)
	// QueryAudit returns every record that q's non-empty fields match,
	// newest first, those with ID < q.BeforeID (0 = from the newest), at
	// most q.Limit (1..MaxAuditPage, else task.ErrInvalid).
	QueryAudit(ctx context.Context, q AuditQuery) ([]*AuditRecord, error)
}

// AuditQuery filters Auditlog.QueryAudit; empty fields match anything.
type AuditQuery struct {
	Scenario string // a scenario, or one of the AuditKind… kinds
	RowID    string
	Who      string
	Action   string
	BeforeID int64
	Limit    int
}

// Kinds of the audit records that are not row edits: such a record holds
// the kind in Scenario (a name no scenario can have) and the object's id in
// RowID.
const (
	AuditKindTarget = "@target"
	AuditKindTask   = "@task"
	AuditKindJob    = "@job"
	AuditKindRun    = "@run"
	AuditKindUser   = "@user"
	AuditKindToken  = "@token"
	// AuditKindFlow holds flows' edits, triggers and stopped executions
	// (RowID the flow id, or the execution id for a stop).
	AuditKindFlow = "@flow"
	// AuditKindSettings holds the live settings' changes (RowID
	// "settings").
	AuditKindSettings = "@settings"
)

// MaxAuditPage bounds ListAudit's limit.
const MaxAuditPage = 500

// MaxAuditWho bounds AuditRecord.Who, in bytes.
const MaxAuditWho = 128

// Audit actions.
const (
	AuditCreate     = "create"
	AuditUpdate     = "update"
	AuditDelete     = "delete"
	AuditImport     = "import"
	AuditActivate   = "activate"
	AuditDeactivate = "deactivate"
	// Actions on the other kinds: AuditCreate, AuditUpdate and AuditDelete,
	// and these.
	AuditState    = "state"    // a task's state set
	AuditTrigger  = "trigger"  // a task fired by hand
	AuditCancel   = "cancel"   // a job cancelled
	AuditBlock    = "block"    // a job blocked
	AuditUnblock  = "unblock"  // a job unblocked
	AuditBackfill = "backfill" // jobs backfilled
	AuditStop     = "stop"     // a flow execution stopped
	AuditSubmit   = "submit"   // jobs submitted or upserted
)

// AuditRecord is one row edit.
type AuditRecord struct {
	ID       int64     `json:"id"`
	Scenario string    `json:"scenario"`
	RowID    string    `json:"row_id"`
	Action   string    `json:"action"`
	Who      string    `json:"who"`
	At       time.Time `json:"at"`
	// Old and New are the row's fields before and after the edit; Old is
	// nil for a created row and New for a deleted one.
	Old map[string]any `json:"old"`
	New map[string]any `json:"new"`
}
