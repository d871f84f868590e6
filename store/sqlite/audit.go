package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"cronsheet/store"
	"cronsheet/task"
)

// The audit trail (store.AuditLog) on SQLite: one append-only table,
// listed newest first per row through ix_audit_row. Open creates it
// (idempotently) with the rest of the schema.
const auditSchema = `
CREATE TABLE IF NOT EXISTS audit (
	id       INTEGER PRIMARY KEY AUTOINCREMENT,
	scenario TEXT    NOT NULL,
	row_id   TEXT    NOT NULL,
	action   TEXT    NOT NULL,
	who      TEXT    NOT NULL DEFAULT '',
	at       INTEGER NOT NULL DEFAULT 0,
	old      TEXT    NOT NULL DEFAULT 'null',
	new      TEXT    NOT NULL DEFAULT 'null'
);
CREATE INDEX IF NOT EXISTS ix_audit_row ON audit (scenario, row_id, id);
`

var _ store.AuditLog = (*Store)(nil)

// AddAudit appends one audit record, see store.AuditLog.
func (s *Store) AddAudit(ctx context.Context, rec *store.AuditRecord) error {
	if rec == nil || rec.Scenario == "" || rec.RowID == "" || rec.Action == "" {
		return fmt.Errorf("add audit: %w", task.Invalid("audit", "scenario, row id and action are required"))
	}
	oldJSON, err := json.Marshal(rec.Old)
	if err != nil {
		return fmt.Errorf("add audit: old fields: %w", err)
	}
	newJSON, err := json.Marshal(rec.New)
	if err != nil {
		return fmt.Errorf("add audit: new fields: %w", err)
	}
	at := rec.At
	if at.IsZero() {
		at = s.now()
	}
	res, err := s.w.ExecContext(ctx, `INSERT INTO audit (scenario, row_id, action, who, at, old, new)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, rec.Scenario, rec.RowID, rec.Action,
		cutUTF8(rec.Who, store.MaxAuditWho), store.UnixMS(at), string(oldJSON), string(newJSON))
	if err == nil {
		rec.ID, err = res.LastInsertId()
	}
	if err != nil {
		return fmt.Errorf("add audit %s/%s: %w", rec.Scenario, rec.RowID, err)
	}
	rec.At = store.FromUnixMS(store.UnixMS(at))
	return nil
}

// ListAudit returns a row's audit records newest first, see store.AuditLog.
func (s *Store) ListAudit(ctx context.Context, scenario, rowID string, beforeID int64, limit int) ([]*store.AuditRecord, error) {
	if limit < 1 || limit > store.MaxAuditPage {
		return nil, task.Invalid("limit", "must be from 1 to %d, got %d", store.MaxAuditPage, limit)
	}
	if beforeID <= 0 {
		beforeID = 1<<63 - 1
	}
	recs, err := s.listAudit(ctx, scenario, rowID, beforeID, limit)
	if err != nil {
		return nil, fmt.Errorf("list audit %s/%s: %w", scenario, rowID, err)
	}
	return recs, nil
}

func (s *Store) listAudit(ctx context.Context, scenario, rowID string, beforeID int64, limit int) ([]*store.AuditRecord, error) {
	rs, err := s.r.QueryContext(ctx, `SELECT id, scenario, row_id, action, who, at, old, new FROM audit
		WHERE scenario = ? AND row_id = ? AND id < ? ORDER BY id DESC LIMIT ?`, scenario, rowID, beforeID, limit)
	if err != nil {
		return nil, err
	}
	return scanAudit(rs, limit)
}

// scanAudit reads the audit records of rs and closes it.
func scanAudit(rs *sql.Rows, limit int) ([]*store.AuditRecord, error) {
	defer rs.Close()
	recs := make([]*store.AuditRecord, 0, limit)
	for rs.Next() {
		var (
			rec      store.AuditRecord
			at       int64
			old, neu string
			err      error
		)
		if err = rs.Scan(&rec.ID, &rec.Scenario, &rec.RowID, &rec.Action, &rec.Who, &at, &old, &neu); err != nil {
			return nil, err
		}
		rec.At = store.FromUnixMS(at)
		if rec.Old, err = decodeFields(old); err != nil {
			return nil, err
		}
		if rec.New, err = decodeFields(neu); err != nil {
			return nil, err
		}
		recs = append(recs, &rec)
	}
	return recs, rs.Err()
}

// decodeFields reads a JSON object of fields (or null), numbers as
// json.Number.
func decodeFields(s string) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode audit fields: %w", err)
	}
	return m, nil
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

// QueryAudit returns the records q matches, newest first, see
// store.AuditLog. It walks the id (primary key) backwards, filtering.
func (s *Store) QueryAudit(ctx context.Context, q store.AuditQuery) ([]*store.AuditRecord, error) {
	if q.Limit < 1 || q.Limit > store.MaxAuditPage {
		return nil, task.Invalid("limit", "must be from 1 to %d, got %d", store.MaxAuditPage, q.Limit)
	}
	if q.BeforeID <= 0 {
		q.BeforeID = 1<<63 - 1
	}
	rs, err := s.r.QueryContext(ctx, `SELECT id, scenario, row_id, action, who, at, old, new FROM audit
		WHERE id < ? AND (? = '' OR scenario = ?) AND (? = '' OR row_id = ?) AND (? = '' OR who = ?)
		AND (? = '' OR action = ?) ORDER BY id DESC LIMIT ?`, q.BeforeID, q.Scenario, q.Scenario, q.RowID, q.RowID,
		q.Who, q.Who, q.Action, q.Action, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("query audit: %w", err)
	}
	recs, err := scanAudit(rs, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("query audit: %w", err)
	}
	return recs, nil
}
