package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"cronsheet/store"
	"cronsheet/task"
)

// Export and import of the outbox (by id), the row audit trail and job
// transitions (store.Dumper).
const (
	qOutboxStored = `SELECT count(*) FROM outbox WHERE id = ? OR (? != '' AND trigger_id = ?)`
	qDumpAudit    = `SELECT id, scenario, row_id, action, who, at, old, new FROM audit ORDER BY id`
	qRestoreAudit = `INSERT INTO audit (id, scenario, row_id, action, who, at, old, new)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`
	qDumpJobEvents = `SELECT job_id, at, state, trigger_id, attempt, reason FROM job_events
		ORDER BY job_id, at, id`
	qJobHasEvents = `SELECT count(*) FROM (SELECT 1 FROM job_events WHERE job_id = ? LIMIT 1)`
)

// RestoreOutbox stores m as dumped unless its id or trigger id is stored.
func (s *Store) RestoreOutbox(ctx context.Context, m *task.OutboxMessage) (bool, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, qOutboxStored, m.ID, m.TriggerID, m.TriggerID).Scan(&n); err != nil {
		return false, fmt.Errorf("restore outbox message %d: %w", m.ID, err)
	}
	if n > 0 {
		return false, nil
	}
	if err := s.AddOutbox(ctx, m); err != nil {
		return false, fmt.Errorf("restore outbox message %d: %w", m.ID, err)
	}
	return true, nil
}

// DumpAudit calls fn with every audit record, in id order.
func (s *Store) DumpAudit(ctx context.Context, fn func(*store.AuditRecord) error) error {
	err := s.each(ctx, qDumpAudit, func(rs *sql.Rows) error {
		var (
			rec      store.AuditRecord
			at       int64
			old, neu string
		)
		if err := rs.Scan(&rec.ID, &rec.Scenario, &rec.RowID, &rec.Action, &rec.Who, &at, &old, &neu); err != nil {
			return err
		}
		rec.At = store.FromUnixMS(at)
		var err error
		if rec.Old, err = decodeFields(old); err != nil {
			return err
		}
		if rec.New, err = decodeFields(neu); err != nil {
			return err
		}
		return fn(&rec)
	})
	if err != nil {
		return fmt.Errorf("dump audit: %w", err)
	}
	return nil
}

// RestoreAudit stores rec as dumped, its id kept, unless the id is stored.
func (s *Store) RestoreAudit(ctx context.Context, rec *store.AuditRecord) (bool, error) {
	if rec == nil || rec.ID < 1 {
		return false, fmt.Errorf("restore audit: %w", task.Invalid("id", "must be positive"))
	}
	oldJSON, err := json.Marshal(rec.Old)
	if err != nil {
		return false, fmt.Errorf("restore audit %d: old fields: %w", rec.ID, err)
	}
	newJSON, err := json.Marshal(rec.New)
	if err != nil {
		return false, fmt.Errorf("restore audit %d: new fields: %w", rec.ID, err)
	}
	res, err := s.w.ExecContext(ctx, qRestoreAudit, rec.ID, rec.Scenario, rec.RowID, rec.Action, rec.Who,
		store.UnixMS(rec.At), string(oldJSON), string(newJSON))
	if err != nil {
		return false, fmt.Errorf("restore audit %d: %w", rec.ID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// DumpJobEvents calls fn with every job transition, by job, oldest first.
func (s *Store) DumpJobEvents(ctx context.Context, fn func(store.JobEvent) error) error {
	err := s.each(ctx, qDumpJobEvents, func(rs *sql.Rows) error {
		var (
			ev store.JobEvent
			at int64
		)
		if err := rs.Scan(&ev.JobID, &at, &ev.State, &ev.TriggerID, &ev.Attempt, &ev.Reason); err != nil {
			return err
		}
		ev.At = store.FromUnixMS(at)
		return fn(ev)
	})
	if err != nil {
		return fmt.Errorf("dump job events: %w", err)
	}
	return nil
}

// RestoreJobEvents stores one job's transitions unless it has some.
func (s *Store) RestoreJobEvents(ctx context.Context, jobID string, evs []store.JobEvent) (bool, error) {
	if err := checkJobEvents(jobID, evs); err != nil {
		return false, err
	}
	var n int
	if err := s.r.QueryRowContext(ctx, qJobHasEvents, jobID).Scan(&n); err != nil {
		return false, fmt.Errorf("restore events of job %s: %w", jobID, err)
	}
	if n > 0 || len(evs) == 0 {
		return false, nil
	}
	for len(evs) > 0 {
		k := min(len(evs), store.MaxStatusBatch)
		if err := s.AddJobEvents(ctx, evs[:k]); err != nil {
			return false, fmt.Errorf("restore events of job %s: %w", jobID, err)
		}
		evs = evs[k:]
	}
	return true, nil
}

// checkJobEvents checks that every event names jobID.
func checkJobEvents(jobID string, evs []store.JobEvent) error {
	for i, ev := range evs {
		if jobID == "" || ev.JobID != jobID {
			return fmt.Errorf("restore job events: %w",
				task.Invalid("job_id", "event %d names job %q, not %q", i, task.Truncate(ev.JobID, 70), task.Truncate(jobID, 70)))
		}
	}
	return nil
}
