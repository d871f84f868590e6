package store

import (
	"context"
	"time"
)

// AuditLog keeps the audit trail of row edits made through the API: who
// changed which row, when, how, and the field values before and after. It is
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
}

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
