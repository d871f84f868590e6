package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// Targets (store.Targets) live in the targets table: the target as JSON in
// doc, without the bookkeeping (id, version, times), which has its own
// columns. The primary key serves GetTarget and keyset ListTargets.

const targetCols = `id, doc, version, created_at, updated_at`

const (
	qInsertTarget = `INSERT INTO targets (` + targetCols + `) VALUES (?, ?, 1, ?, ?)`
	qGetTarget    = `SELECT ` + targetCols + ` FROM targets WHERE id = ?`
	// qTargetVersion runs on the writer, inside UpdateTarget's transaction.
	qTargetVersion = `SELECT version FROM targets WHERE id = ?`
	qUpdateTarget  = `UPDATE targets SET doc = ?, version = version + 1, updated_at = ?
		WHERE id = ? RETURNING ` + targetCols
	qDeleteTarget = `DELETE FROM targets WHERE id = ?`
	qListTargets  = `SELECT ` + targetCols + ` FROM targets WHERE id > ? ORDER BY id LIMIT ?`
)

// targetDocOf returns the doc text of t: t without its id, version and
// times.
func targetDocOf(t *task.Target) (string, error) {
	d := *t
	d.ID, d.Version, d.CreatedAt, d.UpdatedAt = "", 0, time.Time{}, time.Time{}
	b, err := json.Marshal(&d)
	return string(b), err
}

// scanTarget reads the targetCols of one row.
func scanTarget(sc scanner) (*task.Target, error) {
	var (
		id, doc          string
		version          int64
		created, updated int64
	)
	if err := sc.Scan(&id, &doc, &version, &created, &updated); err != nil {
		return nil, err
	}
	var t task.Target
	if err := json.Unmarshal([]byte(doc), &t); err != nil {
		return nil, fmt.Errorf("decode target %s: %w", id, err)
	}
	t.ID, t.Version = id, version
	t.CreatedAt, t.UpdatedAt = store.FromUnixMS(created), store.FromUnixMS(updated)
	return &t, nil
}

// CreateTarget stores a new target with version 1 and CreatedAt = UpdatedAt
// = now, and sets those on t. A taken id is task.ErrConflict (the primary
// key decides); an empty one task.ErrInvalid. The caller validates the rest.
func (s *Store) CreateTarget(ctx context.Context, t *task.Target) error {
	if t == nil || t.ID == "" {
		return fmt.Errorf("create target: %w", task.Invalid("id", "required"))
	}
	doc, err := targetDocOf(t)
	if err != nil {
		return fmt.Errorf("create target %s: %w", t.ID, err)
	}
	now := s.nowMS()
	if _, err := s.st.insertTarget.ExecContext(ctx, t.ID, doc, now, now); err != nil {
		return fmt.Errorf("create target %s: %w", t.ID, translate(err))
	}
	t.Version = 1
	t.CreatedAt, t.UpdatedAt = store.FromUnixMS(now), store.FromUnixMS(now)
	return nil
}

// GetTarget returns a target or task.ErrNotFound.
func (s *Store) GetTarget(ctx context.Context, id string) (*task.Target, error) {
	t, err := scanTarget(s.st.getTarget.QueryRowContext(ctx, id))
	if err != nil {
		return nil, fmt.Errorf("get target %s: %w", id, translate(err))
	}
	return t, nil
}

// UpdateTarget replaces a target's fields but its id, version and creation
// time, sets UpdatedAt to now and bumps its version, in one transaction
// that first checks ifVersion (when > 0; another version is
// task.ErrConflict). A missing target is task.ErrNotFound. It returns the
// target as stored.
func (s *Store) UpdateTarget(ctx context.Context, t *task.Target, ifVersion int64) (*task.Target, error) {
	if t == nil || t.ID == "" {
		return nil, fmt.Errorf("update target: %w", task.Invalid("id", "required"))
	}
	doc, err := targetDocOf(t)
	if err != nil {
		return nil, fmt.Errorf("update target %s: %w", t.ID, err)
	}
	var out *task.Target
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var have int64
		if err := in(ctx, tx, s.st.targetVersion).QueryRowContext(ctx, t.ID).Scan(&have); err != nil {
			return translate(err)
		}
		if ifVersion > 0 && have != ifVersion {
			return fmt.Errorf("%w: target version is %d, not %d", task.ErrConflict, have, ifVersion)
		}
		out, err = scanTarget(in(ctx, tx, s.st.updateTarget).QueryRowContext(ctx, doc, s.nowMS(), t.ID))
		return translate(err)
	})
	if err != nil {
		return nil, fmt.Errorf("update target %s: %w", t.ID, err)
	}
	return out, nil
}

// DeleteTarget removes a target; a missing one is task.ErrNotFound. Tasks
// keep the id in their targets. Its health goes with it.
func (s *Store) DeleteTarget(ctx context.Context, id string) error {
	n, err := execCount(ctx, s.st.deleteTarget, id)
	if err == nil && n == 0 {
		err = task.ErrNotFound
	}
	if err == nil {
		err = s.forgetHealth(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("delete target %s: %w", id, err)
	}
	return nil
}

// ListTargets pages targets in id order after afterID; a limit that is not
// positive is task.ErrInvalid.
func (s *Store) ListTargets(ctx context.Context, afterID string, limit int) ([]*task.Target, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("list targets: %w", err)
	}
	rs, err := s.st.listTargets.QueryContext(ctx, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("list targets: %w", err)
	}
	defer rs.Close()
	var out []*task.Target
	for rs.Next() {
		t, err := scanTarget(rs)
		if err != nil {
			return nil, fmt.Errorf("list targets: %w", err)
		}
		out = append(out, t)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list targets: %w", err)
	}
	return out, nil
}
