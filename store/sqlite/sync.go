package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"cronsheet/store"
	"cronsheet/task"
)

const (
	qTaskForUpsert = `SELECT id, scenario, row_id, doc, deleted, is_enable FROM time_task WHERE task_id = ?`
	qInsertTask    = `INSERT INTO time_task (task_id, scenario, row_id, doc, is_enable, is_claimed,
			claimed_by, lease_until, is_done, deleted, next_fire, last_fire, last_status, version,
			created_at, updated_at, arm_at)
		VALUES (?, ?, ?, ?, ?, 0, '', 0, 0, 0, ?, ?, ?, 1, ?, ?, ?)`
	// qRescheduleTask applies a schedule change (or revives a deleted task):
	// the claim and is_done are reset so that the publish patrol arms the new
	// schedule.
	qRescheduleTask = `UPDATE time_task SET doc = ?, is_enable = ?, is_claimed = 0, claimed_by = '',
			lease_until = 0, is_done = 0, deleted = 0, version = version + 1, arm_at = 0, updated_at = ?,
			scenario = ?, row_id = ?
		WHERE id = ?`
	qUpdateTask = `UPDATE time_task SET doc = ?, is_enable = ?, version = version + 1, arm_at = 0, updated_at = ?
		WHERE id = ?`
	qDisableRowTask = `UPDATE time_task SET is_enable = 0, version = version + 1, arm_at = 0, updated_at = ?
		WHERE scenario = ? AND row_id = ? AND row_id <> '' AND deleted = 0`
	qMarkRowFetched = `UPDATE rows SET is_fetched = 1, is_active = ?, error = ?
		WHERE scenario = ? AND id = ?`
)

// ApplySync records the sync patrol's verdict on one row in one transaction:
// it checks the row's version, upserts p.Task (or disables the row's task
// when p.DisableTask), and marks the row fetched. Besides the contract of
// store.ApplySyncParams: a missing row is task.ErrNotFound; a zero
// Task.Anchor means p.Now; when the row's task_id changed, the row's previous
// task is retired as if the row were deleted (deleted, is_enable=0); an
// existing task keeps its stored state (also one that comes back).
// The row's version and updated_at are left alone, so a user's pending
// edit based on that version still applies.
func (s *Store) ApplySync(ctx context.Context, p store.ApplySyncParams) error {
	now := store.UnixMS(p.Now)
	if now == 0 {
		now = s.nowMS()
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var have int64
		if err := in(ctx, tx, s.st.rowVersion).QueryRowContext(ctx, p.Scenario, p.RowID).Scan(&have); err != nil {
			return translate(err)
		}
		if have != p.RowVersion {
			return fmt.Errorf("%w: row version is %d, not %d", task.ErrConflict, have, p.RowVersion)
		}
		switch {
		case p.Task != nil:
			if err := s.upsertTask(ctx, tx, p, now); err != nil {
				return err
			}
		case p.DisableTask:
			if _, err := in(ctx, tx, s.st.disableRowTask).ExecContext(ctx, now, p.Scenario, p.RowID); err != nil {
				return err
			}
		}
		_, err := in(ctx, tx, s.st.markRowFetched).ExecContext(ctx, p.IsActive, p.Error, p.Scenario, p.RowID)
		return err
	})
	if err != nil {
		return fmt.Errorf("apply sync of row %s/%s: %w", p.Scenario, p.RowID, err)
	}
	return nil
}

// upsertTask inserts or updates p.Task for the row p names, per
// store.ApplySyncParams, and retires the row's tasks under other ids.
func (s *Store) upsertTask(ctx context.Context, tx *sql.Tx, p store.ApplySyncParams, now int64) error {
	t := p.Task
	if t.TaskID == "" {
		return task.Invalid("task_id", "required")
	}
	anchor := store.UnixMS(t.Anchor)
	if anchor == 0 {
		anchor = now
	}
	enable := 0
	if t.IsEnable == 1 {
		enable = 1
	}
	var (
		id                    int64
		scenario, rowID, text string
		deleted, wasEnabled   int
	)
	err := in(ctx, tx, s.st.taskForUpsert).QueryRowContext(ctx, t.TaskID).Scan(&id, &scenario, &rowID, &text, &deleted, &wasEnabled)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		err = s.insertTask(ctx, tx, p, docOf(t, anchor), enable, now)
	case err != nil:
		return err
	case (scenario != p.Scenario || rowID != p.RowID) && deleted == 0:
		return fmt.Errorf("%w: task %s belongs to row %s/%s", store.ErrTaskIDTaken, t.TaskID, scenario, rowID)
	default:
		revived := deleted == 1 || (wasEnabled == 0 && enable == 1)
		err = s.updateTask(ctx, tx, id, text, revived, p, t, anchor, enable, now)
	}
	if err != nil {
		return err
	}
	_, err = in(ctx, tx, s.st.retireRowTasks).ExecContext(ctx, now, p.Scenario, p.RowID, t.TaskID)
	return err
}

func (s *Store) insertTask(ctx context.Context, tx *sql.Tx, p store.ApplySyncParams, d taskDoc, enable int, now int64) error {
	doc, err := d.marshal()
	if err != nil {
		return err
	}
	t := p.Task
	_, err = in(ctx, tx, s.st.insertTask).ExecContext(ctx, t.TaskID, p.Scenario, p.RowID, doc, enable,
		store.UnixMS(t.NextFire), store.UnixMS(t.LastFire), t.LastStatus, now, now, store.UnixMS(t.ArmAt))
	return translate(err)
}

// updateTask rewrites an existing task's document: a changed schedule, or a
// task coming back (deleted or disabled before), takes the new anchor, loses
// its claim and its is_done; any other change keeps the stored anchor and
// the claim. The stored state stays: SetTaskState owns it (a row's mapping
// always says running); a document stored without one takes t's.
func (s *Store) updateTask(ctx context.Context, tx *sql.Tx, id int64, oldText string, revived bool,
	p store.ApplySyncParams, t *task.Task, anchor int64, enable int, now int64) error {
	var old taskDoc
	if err := json.Unmarshal([]byte(oldText), &old); err != nil {
		return fmt.Errorf("decode task %s: %w", t.TaskID, err)
	}
	d := docOf(t, old.Anchor)
	if old.State != "" {
		d.State = old.State
	}
	reschedule := revived || !old.sameSchedule(&d)
	if reschedule {
		d.Anchor = anchor
	}
	doc, err := d.marshal()
	if err != nil {
		return err
	}
	if reschedule {
		// A deleted task's id may be taken by another row: it moves there.
		_, err = in(ctx, tx, s.st.rescheduleTask).ExecContext(ctx, doc, enable, now, p.Scenario, p.RowID, id)
		return err
	}
	_, err = in(ctx, tx, s.st.updateTask).ExecContext(ctx, doc, enable, now, id)
	return err
}
