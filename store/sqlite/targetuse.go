package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// tasksUsingTarget matches the rows' tasks not deleted whose document names
// the target (?1) among its targets or alert targets. It scans time_task: a
// target is deleted rarely, and no index serves a match inside JSON arrays.
const tasksUsingTarget = `FROM time_task WHERE deleted = 0 AND row_id != '' AND (
	EXISTS (SELECT 1 FROM json_each(doc, '$.targets') WHERE value = ?1) OR
	EXISTS (SELECT 1 FROM json_each(doc, '$.alert.targets') WHERE value = ?1))`

// TasksUsingTarget returns the tasks naming target id, see
// store.TargetUsers.
func (s *Store) TasksUsingTarget(ctx context.Context, id string, limit int) ([]string, int, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, 0, fmt.Errorf("tasks using target %s: %w", id, err)
	}
	var total int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) `+tasksUsingTarget, id).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("tasks using target %s: %w", id, err)
	}
	if total == 0 {
		return nil, 0, nil
	}
	rs, err := s.r.QueryContext(ctx, `SELECT task_id `+tasksUsingTarget+` ORDER BY task_id LIMIT ?2`, id, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("tasks using target %s: %w", id, err)
	}
	defer rs.Close()
	var ids []string
	for rs.Next() {
		var tid string
		if err := rs.Scan(&tid); err != nil {
			return nil, 0, fmt.Errorf("tasks using target %s: %w", id, err)
		}
		ids = append(ids, tid)
	}
	if err := rs.Err(); err != nil {
		return nil, 0, fmt.Errorf("tasks using target %s: %w", id, err)
	}
	return ids, total, nil
}

// targetGuardSchema holds the targets' holds and tombstones
// (store.TargetUsers): one row per (target, holder), the tombstone with
// holder ”. Like target_health, it has no schema version of its own:
// CREATE … IF NOT EXISTS adds it to an existing file.
const targetGuardSchema = `
CREATE TABLE IF NOT EXISTS target_guard (
	target TEXT    NOT NULL,
	holder TEXT    NOT NULL,
	at     INTEGER NOT NULL,
	PRIMARY KEY (target, holder)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ix_target_guard_holder ON target_guard (holder) WHERE holder <> '';
`

// HoldTargets stores holder's holds on ids and reads their tombstones in
// one transaction (see store.TargetUsers).
func (s *Store) HoldTargets(ctx context.Context, holder string, ids []string, now time.Time) error {
	if holder == "" {
		return fmt.Errorf("hold targets: %w", task.Invalid("holder", "required"))
	}
	since := now.Add(-store.GuardTTL).UnixMilli()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `INSERT INTO target_guard (target, holder, at) VALUES (?, ?, ?)
				ON CONFLICT (target, holder) DO UPDATE SET at = excluded.at`, id, holder, now.UnixMilli()); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM target_guard WHERE target = ? AND holder = '' AND at >= ?`,
				id, since).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return fmt.Errorf("%w: target %q is being deleted", task.ErrConflict, id)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("hold targets: %w", translate(err))
	}
	return nil
}

// ReleaseTargets removes holder's holds.
func (s *Store) ReleaseTargets(ctx context.Context, holder string) error {
	if holder == "" {
		return nil
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM target_guard WHERE holder = ?`, holder); err != nil {
		return fmt.Errorf("release targets: %w", translate(err))
	}
	return nil
}

// BeginTargetDelete stores id's tombstone unless a live one is there.
func (s *Store) BeginTargetDelete(ctx context.Context, id string, now time.Time) error {
	n, err := execCountQ(ctx, s.w, `INSERT INTO target_guard (target, holder, at) VALUES (?, '', ?)
		ON CONFLICT (target, holder) DO UPDATE SET at = excluded.at WHERE at < ?`,
		id, now.UnixMilli(), now.Add(-store.GuardTTL).UnixMilli())
	if err != nil {
		return fmt.Errorf("begin delete of target %s: %w", id, translate(err))
	}
	if n == 0 {
		return fmt.Errorf("begin delete of target %s: %w: another delete of it is under way", id, task.ErrConflict)
	}
	return nil
}

// TargetHolds counts id's holds stored at or after since.
func (s *Store) TargetHolds(ctx context.Context, id string, since time.Time) (int, error) {
	var n int
	err := s.w.QueryRowContext(ctx, `SELECT count(*) FROM target_guard WHERE target = ? AND holder <> '' AND at >= ?`,
		id, since.UnixMilli()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("holds of target %s: %w", id, translate(err))
	}
	return n, nil
}

// EndTargetDelete removes id's tombstone.
func (s *Store) EndTargetDelete(ctx context.Context, id string) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM target_guard WHERE target = ? AND holder = ''`, id); err != nil {
		return fmt.Errorf("end delete of target %s: %w", id, translate(err))
	}
	return nil
}

// execCountQ runs query on db and returns the rows it changed.
func execCountQ(ctx context.Context, db *sql.DB, query string, args ...any) (int64, error) {
	res, err := db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
